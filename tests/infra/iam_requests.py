"""One recorded AWS call -> the IAM (and AOSS data-access) authorizations AWS performs for it.

Action names are botocore's `{signing name}:{operation}` except where the service authorizes otherwise: a
DynamoDB transaction is authorized item by item (PutItem, UpdateItem, DeleteItem, ConditionCheckItem, GetItem), an
S3 HeadObject is s3:GetObject, a multipart upload is s3:PutObject, a Bedrock Rerank also needs InvokeModel on its
model, and an OpenSearch Serverless request needs aoss:APIAccessAll on the collection (IAM) plus the data-access
permission of its method and path (the table of the AWS guide, "Supported operations and plugins").

Resources are named as in the deployment: the test's table names, bucket, secret, queue and endpoint are mapped to
the synthesized ones through the AGENTKB_* environment both sides set (infra/environment.py <-> testkit/environment.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from iam_policy import ACCOUNT, PARTITION, FunctionGrants, Request

from infra import constants as c

ARN = f"arn:{PARTITION}"
_NAME = re.compile(r"(?<![:\w])(#?[A-Za-z_]\w*)")
_KEYWORDS = frozenset({"SET", "REMOVE", "ADD", "DELETE", "AND", "OR", "NOT", "BETWEEN", "IN", "if_not_exists",
                       "list_append", "attribute_exists", "attribute_not_exists", "attribute_type", "begins_with",
                       "contains", "size"})
_TRANSACT = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem",
             "Get": "GetItem"}
_S3 = {"HeadObject": "GetObject", "CreateMultipartUpload": "PutObject", "UploadPart": "PutObject",
       "CompleteMultipartUpload": "PutObject", "ListObjectsV2": "ListBucket", "ListObjects": "ListBucket",
       "HeadBucket": "ListBucket"}
_BUCKET_LEVEL = frozenset({"ListBucket"})
# (method, path suffix after the index) -> AOSS data-access permission; "" is the index itself.
_AOSS = {("HEAD", ""): "DescribeIndex", ("GET", ""): "DescribeIndex", ("PUT", ""): "CreateIndex",
         ("DELETE", ""): "DeleteIndex", ("GET", "_mapping"): "DescribeIndex", ("PUT", "_mapping"): "UpdateIndex",
         ("POST", "_search"): "ReadDocument", ("GET", "_search"): "ReadDocument", ("POST", "_count"): "ReadDocument",
         ("POST", "_bulk"): "WriteDocument", ("POST", "_doc"): "WriteDocument"}
HASH_KEYS = {name: keys[0] for name, keys in c.TABLES.items()}


@dataclass(frozen=True)
class Call:
    """One call a function made: botocore's service and operation and its parameters, or (service "aoss") an
    OpenSearch request with params {"endpoint", "method", "path"}."""

    function: str
    service: str
    signing_name: str
    operation: str
    params: dict[str, Any]

    def describe(self) -> str:
        if self.service == "aoss":
            return f"aoss {self.params['method']} {self.params['path']}"
        target = self.params.get("TableName") or self.params.get("Bucket") or self.params.get("QueueUrl") or ""
        return f"{self.service}.{self.operation} {target}".strip()


class Deployment:
    """Maps a recorded call to the requests AWS would authorize in the synthesized deployment."""

    def __init__(self, grants: FunctionGrants, test_environment: dict[str, str], region: str) -> None:
        self.grants, self.region = grants, region
        self.renames: dict[str, dict[str, str]] = {
            function: {test_environment[k]: v for k, v in deployed.items()
                       if k.startswith("AGENTKB_") and k in test_environment and test_environment[k] != v}
            for function, deployed in grants.environment.items()}
        self.hash_keys = {self._deployed(f, env[f"AGENTKB_{t.upper()}_TABLE"]): HASH_KEYS[t]
                          for f, env in grants.environment.items() for t in HASH_KEYS
                          if f"AGENTKB_{t.upper()}_TABLE" in env}

    def _deployed(self, function: str, value: str) -> str:
        return self.renames.get(function, {}).get(value, value)

    def requests(self, call: Call) -> list[Request]:
        handler = getattr(self, "_" + call.service.replace("-", "_"), None)
        if handler is None:
            return [self._request(call, f"{call.signing_name}:{call.operation}", "*")]
        return handler(call)  # type: ignore[no-any-return]

    def _request(self, call: Call, action: str, resource: str, keys: dict[str, list[str]] | None = None,
                 *, data_access: bool = False) -> Request:
        frozen = tuple(sorted((k, tuple(v)) for k, v in (keys or {}).items()))
        return Request(call.function, action, resource, call.describe(), frozen, data_access)

    def _table_arn(self, call: Call, table: str, index: str | None = None) -> str:
        name = self._deployed(call.function, table)
        return f"{ARN}:dynamodb:{self.region}:{ACCOUNT}:table/{name}" + (f"/index/{index}" if index else "")

    def _dynamodb(self, call: Call) -> list[Request]:
        p, op = call.params, call.operation
        if op in ("BatchGetItem", "BatchWriteItem"):
            return [self._request(call, f"dynamodb:{op}", self._table_arn(call, table)) for table in p["RequestItems"]]
        if op in ("TransactWriteItems", "TransactGetItems"):
            return [self._item(call, _TRANSACT[kind], item) for entry in p["TransactItems"]
                    for kind, item in entry.items()]
        return [self._item(call, op, p)]

    def _item(self, call: Call, action: str, p: dict[str, Any]) -> Request:
        table = p["TableName"]
        hash_key = self.hash_keys.get(self._deployed(call.function, table), "pk")
        record = p.get("Key") or p.get("Item") or {}
        leading = [str(next(iter(record[hash_key].values())))] if hash_key in record else []
        names = set(record)
        for expression in ("UpdateExpression", "ConditionExpression", "ProjectionExpression",
                           "KeyConditionExpression", "FilterExpression"):
            for token in _NAME.findall(p.get(expression, "")):
                if token not in _KEYWORDS:
                    names.add(p.get("ExpressionAttributeNames", {}).get(token, token))
        keys = {"dynamodb:LeadingKeys": leading, "dynamodb:Attributes": sorted(names)}
        return self._request(call, f"dynamodb:{action}", self._table_arn(call, table, p.get("IndexName")), keys)

    def _s3(self, call: Call) -> list[Request]:
        p = call.params
        action = _S3.get(call.operation, call.operation)
        if action == "GetObject" and p.get("VersionId"):
            action = "GetObjectVersion"
        bucket = self._deployed(call.function, p["Bucket"])
        resource = f"{ARN}:s3:::{bucket}" + ("" if action in _BUCKET_LEVEL else f"/{p['Key']}")
        return [self._request(call, f"s3:{action}", resource)]

    def _sqs(self, call: Call) -> list[Request]:
        url = self._deployed(call.function, call.params["QueueUrl"])
        host, account, name = url.removeprefix("https://").split("/")
        region = host.split(".")[1]
        action = call.operation.removesuffix("Batch")
        return [self._request(call, f"sqs:{action}", f"{ARN}:sqs:{region}:{account}:{name}")]

    def _secretsmanager(self, call: Call) -> list[Request]:
        secret = self._deployed(call.function, call.params["SecretId"])
        return [self._request(call, f"secretsmanager:{call.operation}", secret)]

    def _model_arn(self, call: Call, model: str) -> str:
        model = self._deployed(call.function, model)
        return model if model.startswith("arn:") else f"{ARN}:bedrock:{self.region}::foundation-model/{model}"

    def _bedrock_runtime(self, call: Call) -> list[Request]:
        return [self._request(call, f"bedrock:{call.operation}", self._model_arn(call, call.params["modelId"]))]

    def _bedrock_agent_runtime(self, call: Call) -> list[Request]:
        if call.operation != "Rerank":
            return [self._request(call, f"bedrock:{call.operation}", "*")]
        config = call.params["rerankingConfiguration"]["bedrockRerankingConfiguration"]["modelConfiguration"]
        return [self._request(call, "bedrock:Rerank", "*"),
                self._request(call, "bedrock:InvokeModel", self._model_arn(call, config["modelArn"]))]

    def _aoss(self, call: Call) -> list[Request]:
        endpoint = self._deployed(call.function, call.params["endpoint"].rstrip("/"))
        arn, collection = self.grants.collections.get(endpoint, (f"unknown collection {endpoint}", "?"))
        index, _, rest = call.params["path"].strip("/").partition("/")
        permission = _AOSS.get((call.params["method"], rest.split("/")[0]))
        if permission is None:
            raise AssertionError(f"map {call.describe()} to its AOSS data-access permission in {__name__}")
        return [self._request(call, "aoss:APIAccessAll", arn),
                self._request(call, f"aoss:{permission}", f"index/{collection}/{index}", data_access=True)]
