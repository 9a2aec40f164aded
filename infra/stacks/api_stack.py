"""Stateless resources: functions, roles, the AOSS data-access policy, REST API, WAF, alarms."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.components.api_alarms import ApiAlarms
from infra.components.functions import ServiceFunctions
from infra.components.rest_api import ServiceApi
from infra.components.vector_collection import data_access_policy
from infra.components.waf import ApiFirewall
from infra.config import DeploymentConfig
from infra.stacks.data_stack import DataStack

READ_ONLY_FUNCTIONS = ("search", "recall", "snapshot")


class ApiStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig, data: DataStack,
                 **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.functions = ServiceFunctions(self, "Functions", config=config, data=data)
        roles = self.functions.roles
        # Lives here, beside the roles it names: replacing a role must update the policy in the same deploy.
        self.access_policy = data_access_policy(
            self, "VectorAccessPolicy", collection_name=data.vectors.name,
            readers=[roles[name] for name in READ_ONLY_FUNCTIONS], writers=[roles["ingest"]],
        )
        self.service_api = ServiceApi(self, "Api", config=config, functions=dict(self.functions.functions))
        self.firewall = ApiFirewall(self, "Firewall", config=config, stage=self.service_api.stage)
        self.alarms = ApiAlarms(
            self, "Alarms", config=config, api_name=self.service_api.api.rest_api_name,
            stage_name=self.service_api.stage.stage_name, access_logs=self.service_api.access_logs,
            functions=self.functions.functions,
        )
        CfnOutput(self, "ApiUrl", value=self.service_api.api.url)
