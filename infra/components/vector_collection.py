"""OpenSearch Serverless VECTORSEARCH collection, created after its encryption and network policies."""

from __future__ import annotations

import json

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_opensearchserverless as aoss
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig


class VectorCollection(Construct):
    """Encryption policy + network policy -> (NEXTGEN collection group) -> collection."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        name = config.collection_name
        self.name = name
        collection_rule = {"ResourceType": "collection", "Resource": [f"collection/{name}"]}
        self.encryption_policy = aoss.CfnSecurityPolicy(
            self,
            "EncryptionPolicy",
            name=f"{name}-enc",
            type="encryption",
            policy=json.dumps({"Rules": [collection_rule], "AWSOwnedKey": True}),
        )
        # Lambdas run outside a VPC and sign every request with SigV4; the data-access policy decides who.
        self.network_policy = aoss.CfnSecurityPolicy(
            self,
            "NetworkPolicy",
            name=f"{name}-net",
            type="network",
            policy=json.dumps([{"Rules": [collection_rule], "AllowFromPublic": True}]),
        )
        standby = "ENABLED" if config.standby_replicas else "DISABLED"
        self.group: aoss.CfnCollectionGroup | None = None
        if config.generation == "nextgen":
            self.group = aoss.CfnCollectionGroup(
                self, "Group", name=f"{name}-group", generation="NEXTGEN", standby_replicas=standby,
                description=f"{config.prefix} NextGen collection group",
            )
        self.collection = aoss.CfnCollection(
            self,
            "Collection",
            name=name,
            type="VECTORSEARCH",
            standby_replicas=standby,
            collection_group_name=self.group.name if self.group else None,
            description=f"{config.prefix} knowledge vectors ({config.generation})",
        )
        self.collection.add_resource_dependency(self.encryption_policy)
        self.collection.add_resource_dependency(self.network_policy)
        if self.group:
            self.collection.add_resource_dependency(self.group)

    @property
    def arn(self) -> str:
        return self.collection.attr_arn

    @property
    def endpoint(self) -> str:
        return self.collection.attr_collection_endpoint


def data_access_policy(scope: Construct, construct_id: str, *, collection_name: str,
                       readers: list[iam.IRole], writers: list[iam.IRole]) -> aoss.CfnAccessPolicy:
    """Read-only for the query functions, write for ingest; only this collection's prefixed indexes."""
    index = [f"index/{collection_name}/{c.INDEX_PREFIX}*"]

    def rule(permissions: tuple[str, ...], roles: list[iam.IRole], description: str) -> dict[str, object]:
        return {
            "Description": description,
            "Rules": [{"ResourceType": "index", "Resource": index, "Permission": list(permissions)}],
            "Principal": [role.role_arn for role in roles],
        }

    document = [
        rule(c.AOSS_READ_PERMISSIONS, readers, "query functions: read-only"),
        rule(c.AOSS_WRITE_PERMISSIONS, writers, "ingest function: read-write"),
    ]
    return aoss.CfnAccessPolicy(
        scope,
        construct_id,
        name=f"{collection_name}-access",
        type="data",
        policy=Stack.of(scope).to_json_string(document),
    )
