"""The four Lambda functions: shared code asset + deps layer + Powertools layer, one least-privilege role each."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from infra import bundling
from infra import constants as c
from infra.config import DeploymentConfig
from infra.environment import foundation_model_arn, function_environment
from infra.nag import acknowledge, checkov_skip
from infra.stacks.data_stack import DataStack


def _assets(config: DeploymentConfig) -> tuple[Path, Path, dict[str, Path]]:
    """(code asset, shared deps layer, each function's own layer)."""
    root = bundling.REPO_ROOT
    functions, deps = root / c.FUNCTIONS_ASSET_DIR, root / c.DEPS_ASSET_DIR
    own = {s.name: bundling.function_layer_dir(s.name, root) for s in c.FUNCTIONS if s.own_distributions}
    if config.skip_bundling:
        bundling.ensure_placeholder_deps(root)
        for name in own:
            bundling.ensure_placeholder_deps(root, c.FUNCTION_DEPS_ASSET_DIR.format(function=name))
        if not functions.is_dir():
            bundling.build_functions_asset(root)
    missing = [str(p) for p in (functions, deps / "python", *(d / "python" for d in own.values())) if not p.is_dir()]
    if missing:
        raise FileNotFoundError(f"missing bundle {missing}: run `make build` (or set -c bundling=skip to synth only)")
    return functions, deps, own


class ServiceFunctions(Construct):
    """search, recall, snapshot, ingest; `self.functions[name]` and `self.roles[name]`."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig, data: DataStack) -> None:
        super().__init__(scope, construct_id)
        functions_dir, deps_dir, own_dirs = _assets(config)
        code = lambda_.Code.from_asset(str(functions_dir))
        deps_layer = lambda_.LayerVersion(
            self,
            "DepsLayer",
            code=lambda_.Code.from_asset(str(deps_dir)),
            compatible_runtimes=[lambda_.Runtime.PYTHON_3_11],
            compatible_architectures=[lambda_.Architecture.X86_64],
            description=f"{config.prefix} runtime dependencies (pip --platform {c.PIP_PLATFORM})",
        )
        powertools_layer = lambda_.LayerVersion.from_layer_version_arn(
            self, "PowertoolsLayer",
            ssm.StringParameter.value_for_string_parameter(self, c.POWERTOOLS_LAYER_PARAMETER),
        )
        own_layers = {name: lambda_.LayerVersion(
            self, f"{name.title()}DepsLayer",
            code=lambda_.Code.from_asset(str(path)),
            compatible_runtimes=[lambda_.Runtime.PYTHON_3_11],
            compatible_architectures=[lambda_.Architecture.X86_64],
            description=f"{config.prefix} {name}-only dependencies (pip --platform {c.PIP_PLATFORM})",
        ) for name, path in own_dirs.items()}
        environment = function_environment(config, data)
        self.functions: dict[str, lambda_.Function] = {}
        self.roles: dict[str, iam.Role] = {}
        for spec in c.FUNCTIONS:
            role = iam.Role(
                self, f"{spec.name.title()}Role",
                assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                description=f"{config.prefix} {spec.name} function (least privilege)",
            )
            log_group = logs.LogGroup(
                self, f"{spec.name.title()}Logs",
                retention=logs.RetentionDays.ONE_MONTH,
                removal_policy=RemovalPolicy.DESTROY,
            )
            function = lambda_.Function(
                self, f"{spec.name.title()}Function",
                description=f"{config.prefix} {spec.name}",
                runtime=lambda_.Runtime.PYTHON_3_11,
                architecture=lambda_.Architecture.X86_64,
                handler=spec.handler,
                code=code,
                layers=[powertools_layer, deps_layer, *([own_layers[spec.name]] if spec.name in own_layers else [])],
                memory_size=spec.memory_mb,
                timeout=Duration.seconds(spec.timeout_s),
                reserved_concurrent_executions=spec.reserved_concurrency if config.reserved_concurrency else None,
                role=role,
                environment=environment,
                tracing=lambda_.Tracing.ACTIVE,
                logging_format=lambda_.LoggingFormat.JSON,
                application_log_level_v2=lambda_.ApplicationLogLevel.INFO,
                system_log_level_v2=lambda_.SystemLogLevel.WARN,
                log_group=log_group,
            )
            self._grant(spec, role, log_group, data, config)
            self._acknowledge(spec, function, role, config)
            _explain_checkov(function, log_group, reserved=config.reserved_concurrency)
            self.functions[spec.name] = function
            self.roles[spec.name] = role
        ingest = self.functions["ingest"]
        ingest.add_event_source(sources.SqsEventSource(
            data.ingest.queue, batch_size=c.QUEUE_BATCH_SIZE, report_batch_item_failures=True,
            max_concurrency=c.QUEUE_MAX_CONCURRENCY,
        ))

    @staticmethod
    def _grant(spec: c.FunctionSpec, role: iam.Role, log_group: logs.LogGroup, data: DataStack,
               config: DeploymentConfig) -> None:
        def allow(sid: str, actions: list[str], resources: list[str]) -> None:
            role.add_to_policy(iam.PolicyStatement(sid=sid, actions=actions, resources=resources))

        allow("Logs", ["logs:CreateLogStream", "logs:PutLogEvents"], [f"{log_group.log_group_arn}"])
        for table_name, actions in spec.tables.items():
            sid = "Ddb" + table_name.title().replace("_", "")
            allow(sid, list(actions), [data.tables.by_name[table_name].table_arn])
        if spec.graph_hash_cache:
            role.add_to_policy(iam.PolicyStatement(
                sid="GraphHashCache", actions=["dynamodb:UpdateItem"],
                resources=[data.tables.by_name["graph"].table_arn],
                conditions={
                    "ForAllValues:StringLike": {"dynamodb:LeadingKeys": list(c.GRAPH_HASH_CACHE_PARTITIONS)},
                    "ForAllValues:StringEquals": {"dynamodb:Attributes": list(c.GRAPH_HASH_CACHE_ATTRIBUTES)},
                },
            ))
        allow("KeyPepper", ["secretsmanager:GetSecretValue"],
              [data.pepper.secret.secret_arn])
        allow("Embed", ["bedrock:InvokeModel"], [foundation_model_arn(config.embedding_model)])
        if spec.rerank:
            allow("RerankModel", ["bedrock:InvokeModel"], [foundation_model_arn(config.rerank_model)])
            allow("Rerank", ["bedrock:Rerank"], ["*"])
        allow("VectorCollection", ["aoss:APIAccessAll"], [data.vectors.arn])
        bucket_arn = f"arn:{Aws.PARTITION}:s3:::{config.documents_bucket_name}"
        if spec.bucket:
            actions = ["s3:GetObject"] + (["s3:PutObject"] if spec.bucket == "rw" else [])
            allow("DocumentObjects", actions, [f"{bucket_arn}/*"])
        if spec.name == "ingest":
            allow("IngestQueueSend", ["sqs:SendMessage"], [data.ingest.queue.queue_arn])

    @staticmethod
    def _acknowledge(spec: c.FunctionSpec, function: lambda_.Function, role: iam.Role,
                     config: DeploymentConfig) -> None:
        acknowledge(function, "AwsSolutions-L1",
                    "The shared agentkb package targets Python 3.11 (pyproject requires-python); the runtime "
                    "moves when the code base does, not on every Lambda release.")
        policy = role.node.find_child("DefaultPolicy")
        acknowledge(policy, "AwsSolutions-IAM5[Resource::*]",
                    "Only X-Ray PutTraceSegments/PutTelemetryRecords (added by Tracing.ACTIVE) and bedrock:Rerank "
                    "use '*': neither action supports resource-level permissions.")
        if spec.bucket:
            acknowledge(policy, "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::"
                        f"{config.documents_bucket_name_pattern}/*]",
                        "Objects are keyed by workspace/document ids chosen at run time; scoped to the one bucket.")


def _explain_checkov(function: lambda_.Function, log_group: logs.LogGroup, *, reserved: bool) -> None:
    """The checkov findings this design accepts on every function, each with its reason (docs/reliability.md)."""
    if not reserved:
        checkov_skip(function, "CKV_AWS_115",
                     "Deployed with -c reservedConcurrency=0: the account's concurrency quota is below the 200 the "
                     "reserved defaults need (100 reserved + 100 the account keeps); the stage throttle and the "
                     "per-key rate limit still bound load, but one function's flood can starve the others.")
    checkov_skip(function, "CKV_AWS_116",
                 "API Gateway invokes the function synchronously, where a Lambda DLQ never applies; the ingest "
                 "queue's failed messages go to its own SQS dead-letter queue (redrive policy + alarm).")
    checkov_skip(function, "CKV_AWS_117",
                 "No VPC: every dependency (DynamoDB, S3, SQS, Secrets Manager, Bedrock, OpenSearch Serverless) is "
                 "an AWS API reached over TLS with SigV4 and the function's least-privilege role; a VPC would add "
                 "NAT or six interface endpoints and cold-start cost without narrowing access.")
    checkov_skip(function, "CKV_AWS_173",
                 "The environment holds only resource names, ARNs and settings (config.py), never a secret; the "
                 "key pepper is read from Secrets Manager at run time. Lambda encrypts it at rest with its own key.")
    checkov_skip(log_group, "CKV_AWS_158",
                 "Function logs never carry request bodies or keys (tests/reliability/test_abuse.py); CloudWatch "
                 "Logs encrypts them at rest with its service key, and a CMK would add a key policy to run.")
