"""Stateful resources: tables, bucket, secret, ingest queue, vector collection. Deployed first, changed rarely."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack

from constructs import Construct
from infra.components.ingest_queue import IngestQueue
from infra.components.storage import DocumentBucket, KeyPepper, Tables
from infra.components.vector_collection import VectorCollection
from infra.config import DeploymentConfig


class DataStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        self.tables = Tables(self, "Tables", config=config)
        self.documents = DocumentBucket(self, "Documents", config=config)
        self.pepper = KeyPepper(self, "KeyPepper", config=config)
        self.ingest = IngestQueue(self, "IngestQueue", config=config)
        self.vectors = VectorCollection(self, "Vectors", config=config)
        CfnOutput(self, "CollectionEndpoint", value=self.vectors.endpoint)
        CfnOutput(self, "KeysTableName", value=self.tables.by_name["keys"].table_name)
        CfnOutput(self, "KeyPepperSecretArn", value=self.pepper.secret.secret_arn)
        CfnOutput(self, "DocumentBucketName", value=self.documents.bucket.bucket_name)
