"""AGENTKB_BACKEND=aws wiring: the bundle's ports are the AWS adapters, built lazily, and a real handler
authenticates (DynamoDB key + Secrets Manager pepper), rate-limits (DynamoDB) and writes the catalog."""

from __future__ import annotations

import json

from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.composition import get_ports
from agentkb.services.access.api_keys import create_api_key
from testkit.moto_aws import AwsEnv
from tests.helpers import body_of, response_headers, rest_event


def test_aws_backend_selects_the_aws_adapters_without_building_clients(aws_settings: AwsEnv) -> None:
    aws_client.cache_clear()
    ports = get_ports()
    names = {name: type(getattr(ports, name)).__name__ for name in (
        "catalog", "index", "embedder", "tokenizer", "reranker", "keys", "secrets", "rate_limiter",
        "embedding_cache", "snapshots", "memories", "graph", "idempotency", "objects", "deadline", "indexing_queue")}
    assert names == {"catalog": "DynamoDbCatalog", "index": "OpenSearchIndex", "embedder": "BedrockEmbedder",
                     "tokenizer": "ApproximateTokenizer", "reranker": "BedrockReranker", "keys": "DynamoDbKeyStore",
                     "secrets": "AwsSecretStore", "rate_limiter": "DynamoDbRateLimiter",
                     "embedding_cache": "DynamoDbEmbeddingCache", "snapshots": "DynamoDbSnapshotStore",
                     "memories": "IndexedMemoryStore", "graph": "DynamoDbGraphStore",
                     "idempotency": "PowertoolsIdempotency", "objects": "S3ObjectReader", "deadline": "LambdaDeadline",
                     "indexing_queue": "SqsIndexingQueue"}
    assert aws_client.cache_info().currsize == 0  # no boto3 client until a port is used
    assert ports.embedder.dimension == 256


def test_ingest_handler_creates_a_knowledge_base_on_dynamodb(aws_settings: AwsEnv) -> None:
    from functions.ingest.handler import lambda_handler

    ports = get_ports()
    key, _ = create_api_key(ports.keys, ports.secrets, ["ws1"], ["api:read", "api:write"], "alice")
    event = rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "ws1", "name": "Runbooks",
                                                           "tagDefinitions": [{"tagName": "team",
                                                                               "fieldType": "text"}]}, key=key)
    response = lambda_handler(event, _Context())
    assert response["statusCode"] == 201, response["body"]
    data = body_of(response)["data"]
    assert (data["embeddingModel"], data["embeddingDimension"]) == ("amazon.titan-embed-text-v2:0", 256)
    assert response_headers(response)["x-ratelimit-remaining"] == "599"
    stored = aws_settings.client("dynamodb").get_item(
        TableName=aws_settings.tables["catalog"], Key={"pk": {"S": "WS#ws1"}, "sk": {"S": f"KB#{data['id']}"}})
    assert json.loads(stored["Item"]["tags"]["S"]) == [{"tagName": "team", "fieldType": "text", "slot": "text1"}]
    again = lambda_handler(rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "ws1", "name": "Runbooks"},
                                      key=key), _Context())
    assert again["statusCode"] == 409
    denied = lambda_handler(rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "ws1", "name": "X"},
                                       key=key[:-2] + "zz"), _Context())
    assert denied["statusCode"] == 401


class _Context:
    function_name = "agentkb-ingest"
    memory_limit_in_mb = 1536
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:agentkb-ingest"
    aws_request_id = "req-1"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 60_000


def test_every_client_and_the_signer_come_from_one_session(aws_settings: AwsEnv, monkeypatch) -> None:
    # Given a fresh process state: no session, no clients
    import boto3

    from agentkb.adapters.aws.dynamodb import tables as dynamodb_tables

    created: list[object] = []
    real = boto3.session.Session

    def counting(*args: object, **kwargs: object) -> object:
        created.append(real(*args, **kwargs))
        return created[-1]

    monkeypatch.setattr(boto3.session, "Session", counting)
    dynamodb_tables._session.cache_clear()
    aws_client.cache_clear()
    # When a cold request's clients, the OpenSearch credentials and the pepper are fetched
    ports = get_ports()
    assert ports.secrets.key_pepper()  # through the shared Secrets Manager client
    clients = [aws_client(service, "eu-west-1") for service in ("dynamodb", "secretsmanager", "bedrock-runtime")]
    credentials = dynamodb_tables.aws_credentials()
    # Then one session made them all
    assert len(created) == 1
    assert len({id(c) for c in clients}) == 3 and credentials is not None
    assert ports.secrets._client().meta.service_model.service_name == "secretsmanager"
    dynamodb_tables._session.cache_clear()
    aws_client.cache_clear()
