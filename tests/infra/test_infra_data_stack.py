"""Data stack: tables, bucket, secret, queue + DLQ alarm, OpenSearch Serverless collection and its policies."""

from __future__ import annotations

import json

from aws_cdk.assertions import Match, Template

from infra import constants as c
from infra.app import new_app
from infra.config import DeploymentConfig
from infra.stacks.data_stack import DataStack


def test_every_table_is_on_demand_pitr_and_encrypted(synthesized):
    tables = synthesized.resources(synthesized.data_json, "AWS::DynamoDB::Table")
    assert len(tables) == len(c.TABLES)
    for table in tables.values():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert props["SSESpecification"]["SSEEnabled"] is True
        assert table["DeletionPolicy"] == "Retain"


def test_table_keys_and_ttl_follow_the_contract(synthesized):
    by_name = {t["Properties"]["TableName"]: t["Properties"]
               for t in synthesized.resources(synthesized.data_json, "AWS::DynamoDB::Table").values()}
    idempotency = by_name["agentkb-dev-idempotency"]
    assert idempotency["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert idempotency["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}
    assert by_name["agentkb-dev-rate-limit"]["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    # the memory index markers (P#<ms>#<id>) expire a day after the index accepted the memory
    assert by_name["agentkb-dev-memory"]["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    # embedding-cache entries (EMB#) nobody used for 90 days: the vectors of deleted documents among them
    assert by_name["agentkb-dev-catalog"]["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    for name in ("catalog", "memory", "graph", "snapshot", "keys", "rate-limit"):
        assert by_name[f"agentkb-dev-{name}"]["KeySchema"] == [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]


def test_document_bucket_is_private_encrypted_versioned_logged_and_tls_only(synthesized):
    synthesized.data.has_resource_properties("AWS::S3::Bucket", {
        "BucketEncryption": {"ServerSideEncryptionConfiguration": [
            {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]},
        "VersioningConfiguration": {"Status": "Enabled"},
        "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                           "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
        "LoggingConfiguration": {"DestinationBucketName": Match.any_value(), "LogFilePrefix": "documents/"},
    })
    policies = synthesized.resources(synthesized.data_json, "AWS::S3::BucketPolicy")
    assert len(policies) == 2  # documents + log bucket
    for policy in policies.values():
        statements = policy["Properties"]["PolicyDocument"]["Statement"]
        tls_only = [s for s in statements if s["Effect"] == "Deny"
                    and s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"]
        assert tls_only


def test_key_pepper_secret_is_generated(synthesized):
    synthesized.data.has_resource_properties("AWS::SecretsManager::Secret", {
        "GenerateSecretString": {"PasswordLength": 64, "ExcludePunctuation": True}})


def test_ingest_queue_has_sse_dlq_and_a_dlq_depth_alarm(synthesized):
    queues = synthesized.resources(synthesized.data_json, "AWS::SQS::Queue")
    assert len(queues) == 2
    assert all(q["Properties"]["SqsManagedSseEnabled"] is True for q in queues.values())
    main = next(q for q in queues.values() if "RedrivePolicy" in q["Properties"])
    assert main["Properties"]["RedrivePolicy"]["maxReceiveCount"] == c.QUEUE_MAX_RECEIVE_COUNT
    dlq_id = main["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    synthesized.data.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ApproximateNumberOfMessagesVisible",
        "Namespace": "AWS/SQS",
        "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq_id, "QueueName"]}}],
        "Threshold": 0,
        "ComparisonOperator": "GreaterThanThreshold",
    })


def test_uploads_are_announced_on_the_ingest_queue(synthesized):
    synthesized.data.has_resource_properties("Custom::S3BucketNotifications", {
        "NotificationConfiguration": {"QueueConfigurations": [Match.object_like({
            "Events": ["s3:ObjectCreated:*"],
            "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": c.UPLOAD_PREFIX}]}},
        })]},
    })
    queue_policies = synthesized.resources(synthesized.data_json, "AWS::SQS::QueuePolicy")
    statements = [st for p in queue_policies.values() for st in p["Properties"]["PolicyDocument"]["Statement"]]
    assert any(st.get("Principal") == {"Service": "s3.amazonaws.com"} and "sqs:SendMessage" in st["Action"]
               for st in statements)


def test_collection_is_vectorsearch_and_created_after_both_security_policies(synthesized):
    policies = synthesized.resources(synthesized.data_json, "AWS::OpenSearchServerless::SecurityPolicy")
    by_type = {p["Properties"]["Type"]: (logical_id, json.loads(p["Properties"]["Policy"]))
               for logical_id, p in policies.items()}
    assert set(by_type) == {"encryption", "network"}
    assert by_type["encryption"][1]["Rules"][0]["Resource"] == ["collection/agentkb-dev"]
    assert by_type["network"][1][0]["Rules"][0]["Resource"] == ["collection/agentkb-dev"]
    collections = synthesized.resources(synthesized.data_json, "AWS::OpenSearchServerless::Collection")
    (collection,) = collections.values()
    assert collection["Properties"]["Type"] == "VECTORSEARCH"
    assert collection["Properties"]["StandbyReplicas"] == "ENABLED"
    assert "CollectionGroupName" not in collection["Properties"]  # classic generation
    assert {by_type["encryption"][0], by_type["network"][0]} <= set(collection["DependsOn"])
    synthesized.data.resource_count_is("AWS::OpenSearchServerless::CollectionGroup", 0)


def test_nextgen_generation_and_standby_are_context_settings():
    # Given a data stack alone (cheap) with nextgen and no standby replicas
    app = new_app(context={"collectionGeneration": "nextgen", "standbyReplicas": "disabled", "stage": "qa",
                       "removalPolicy": "destroy"})
    stack = DataStack(app, "data", config=DeploymentConfig.from_node(app.node))
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::OpenSearchServerless::CollectionGroup",
                                     {"Generation": "NEXTGEN", "StandbyReplicas": "DISABLED"})
    template.has_resource_properties("AWS::OpenSearchServerless::Collection", {
        "Name": "agentkb-qa", "StandbyReplicas": "DISABLED", "CollectionGroupName": "agentkb-qa-group"})
    template.has_resource("AWS::DynamoDB::Table", {"DeletionPolicy": "Delete"})
