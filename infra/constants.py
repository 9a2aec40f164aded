"""Every name, default and limit of the agentkb infrastructure, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from agentkb.api.routes_table import ROUTES as API_ROUTES

SERVICE = "agentkb"
PYTHON_VERSION = "3.11"

# Paths (relative to the repository root) produced by `python -m infra.bundling`.
BUILD_DIR = ".build"
FUNCTIONS_ASSET_DIR = ".build/functions"
DEPS_ASSET_DIR = ".build/deps"
# A function's own layer: packages only that function imports (the ingest function's PDF parser), so the other
# functions' bundles never carry them. Their version ranges come from pyproject's extras (one pin per package).
FUNCTION_DEPS_ASSET_DIR = ".build/deps-{function}"
BUNDLE_MANIFEST = ".build/manifest.json"  # which distributions each function's layers carry, written by `make build`
FUNCTION_PACKAGES = ("search", "recall", "snapshot", "ingest", "agentkb")
# Provided by the Lambda runtime or the Powertools layer: never bundled.
PROVIDED_DISTRIBUTIONS = frozenset({"aws-lambda-powertools", "boto3", "botocore", "s3transfer", "jmespath"})
# Local-model packages that must never reach the AWS bundle.
FORBIDDEN_DISTRIBUTIONS = frozenset({"onnxruntime", "tokenizers", "torch", "sentence-transformers"})
MAX_UNZIPPED_BYTES = 100 * 1024 * 1024  # leaves head-room under Lambda's 250 MB (function + layers)
PIP_PLATFORM = "manylinux2014_x86_64"

# Powertools for AWS Lambda (Python) publishes each release's layer ARN as a public SSM parameter. The version is
# the one pyproject pins and the tests run on (tests/infra holds the three equal), never `latest`: a deploy
# must not pick up a Powertools the code was not tested with. A missing parameter fails the deploy loudly.
POWERTOOLS_VERSION = "3.37.0"
POWERTOOLS_LAYER_PARAMETER = f"/aws/service/powertools/python/x86_64/python3.11/{POWERTOOLS_VERSION}"

# Context keys (cdk.json "context" or `cdk synth -c key=value`) and their defaults.
CTX_STAGE = "stage"
CTX_GENERATION = "collectionGeneration"
CTX_STANDBY = "standbyReplicas"
CTX_EMBEDDING_MODEL = "embeddingModelId"
CTX_EMBEDDING_DIMENSION = "embeddingDimension"
CTX_RERANK_MODEL = "rerankModelId"
CTX_THROTTLE_RATE = "throttleRateLimit"
CTX_THROTTLE_BURST = "throttleBurstLimit"
CTX_APP_RATE_LIMIT = "rateLimitPerMinute"
CTX_API_KEY_REQUIRED = "apiKeyRequired"
CTX_REMOVAL = "removalPolicy"
CTX_ALARM_TOPIC = "alarmTopicArn"
CTX_LOG_LEVEL = "logLevel"
CTX_BUNDLING = "bundling"  # "skip": use an empty deps layer (tests, synth without pip)
CTX_RESERVED_CONCURRENCY = "reservedConcurrency"  # "default": FunctionSpec.reserved_concurrency; "0": none
CTX_OIDC_ISSUER = "oidcIssuer"  # an OIDC issuer whose access tokens the functions accept (https)
CTX_OIDC_AUDIENCE = "oidcAudience"  # their audience (comma-separated: several)
CTX_OIDC_WORKSPACES_CLAIM = "oidcWorkspacesClaim"  # the claim listing the workspaces a token reaches
CTX_OIDC_SCOPE_PREFIX = "oidcScopePrefix"  # stripped from scopes ("<resource server>/")
CTX_OIDC_CONSOLE_CLIENT_ID = "oidcConsoleClientId"  # the console's public client at that issuer (code + PKCE)
CTX_OIDC_CONSOLE_NAME = "oidcConsoleName"  # shown as "Sign in with <name>" (default: the issuer's host)
CTX_OIDC_CONSOLE_SCOPE = "oidcConsoleScope"  # the scope the console asks for (default: openid + the API's scopes)
CTX_COGNITO = "cognito"  # "true": the stack creates the issuer (infra/components/identity.py)
CTX_COGNITO_WORKSPACES = "cognitoWorkspaces"  # comma-separated: one workspace:<id> scope each
ENV_BUNDLING = "AGENTKB_BUNDLING"

DEFAULTS = MappingProxyType(
    {
        CTX_STAGE: "dev",
        CTX_GENERATION: "classic",
        CTX_STANDBY: "enabled",
        CTX_EMBEDDING_MODEL: "amazon.titan-embed-text-v2:0",
        CTX_EMBEDDING_DIMENSION: 1024,
        CTX_RERANK_MODEL: "cohere.rerank-v3-5:0",
        CTX_THROTTLE_RATE: 100,
        CTX_THROTTLE_BURST: 200,
        CTX_APP_RATE_LIMIT: 600,
        CTX_API_KEY_REQUIRED: False,
        CTX_REMOVAL: "retain",
        CTX_ALARM_TOPIC: "",
        CTX_LOG_LEVEL: "INFO",
        CTX_BUNDLING: "build",
        CTX_RESERVED_CONCURRENCY: "default",
        CTX_OIDC_ISSUER: "",
        CTX_OIDC_AUDIENCE: "",
        CTX_OIDC_WORKSPACES_CLAIM: "workspaces",
        CTX_OIDC_SCOPE_PREFIX: "",
        CTX_OIDC_CONSOLE_CLIENT_ID: "",
        CTX_OIDC_CONSOLE_NAME: "",
        CTX_OIDC_CONSOLE_SCOPE: "",
        CTX_COGNITO: False,
        CTX_COGNITO_WORKSPACES: "",
    }
)
GENERATIONS = ("classic", "nextgen")
# CDK feature flags the app is written against (cdk.json or -c may still override them).
FEATURE_FLAGS = MappingProxyType(
    {
        "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True,
        # The api stack imports data-stack outputs; strong references stop the data stack dropping them.
        "@aws-cdk/core:defaultCrossStackReferences": "strong",
        "@aws-cdk/aws-apigateway:disableCloudWatchRole": True,
        "@aws-cdk/aws-iam:minimizePolicies": False,
        "@aws-cdk/core:enablePartitionLiterals": True,
        "@aws-cdk/aws-lambda:recognizeLayerVersion": True,
        "@aws-cdk/aws-lambda:useCdkManagedLogGroup": False,
    }
)
STAGE_PATTERN = r"^[a-z][a-z0-9-]{1,11}$"  # keeps every derived AOSS name <= 28/32 chars

# OpenSearch Serverless
INDEX_PREFIX = SERVICE
# Objects created under this prefix are announced on the ingest queue (key: uploads/<workspace>/<kb>/<name>).
UPLOAD_PREFIX = "uploads/"
# The collection's data-access permissions: exactly what the functions' requests need (tests/infra/test_infra_grants.py
# maps each request to its permission). Readers only `_search`; ingest also HEADs and PUTs the indexes it writes.
# No collection-level permission: no function touches templates, aliases or pipelines.
AOSS_READ_PERMISSIONS = ("aoss:ReadDocument",)
AOSS_WRITE_PERMISSIONS = ("aoss:CreateIndex", "aoss:DescribeIndex", "aoss:ReadDocument", "aoss:WriteDocument")
AOSS_OCU_USD_PER_HOUR = 0.24

# DynamoDB tables: logical name -> (partition key, sort key or None, TTL attribute or None)
TABLES = MappingProxyType(
    {
        "catalog": ("pk", "sk", "ttl"),  # ttl: embedding-cache entries unused for 90 days (dynamodb_embedding_cache)
        "memory": ("pk", "sk", "ttl"),  # ttl: the memory index markers (adapters/aws/dynamodb_memory.py)
        "graph": ("pk", "sk", None),
        "snapshot": ("pk", "sk", None),
        "keys": ("pk", "sk", None),
        "rate_limit": ("pk", "sk", "ttl"),
        "idempotency": ("id", None, "expiration"),  # the Powertools idempotency table shape
    }
)
# DynamoDB actions per table: what the adapters call (a transaction is authorized item by item, so
# TransactWriteItems needs the PutItem/UpdateItem/DeleteItem/ConditionCheckItem of its items).
# tests/infra/test_infra_grants.py records every call of every route and fails on a missing or an unused grant.
DDB_GET = ("dynamodb:GetItem",)  # keys lookups; the KB / document / index-version reads of search and snapshot
DDB_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
GRAPH_READ = ("dynamodb:BatchGetItem", "dynamodb:Query")
RATE_COUNT = ("dynamodb:UpdateItem",)  # one conditional counter update per request
IDEMPOTENCY = ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")  # Powertools
CONDITION_CHECK = ("dynamodb:ConditionCheckItem",)  # a transaction's checked-but-unwritten items
DDB_WRITE = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")
# Functions that read the graph's source hash (graph search) without writing the graph may still fill its cache
# (G#<ws> / #META: hash, hash_version, conditional on version): one UpdateItem limited to those partitions and
# attributes, so a search after a memory write does not rehash the whole graph on every request.
GRAPH_HASH_CACHE_PARTITIONS = ("G#*",)
GRAPH_HASH_CACHE_ATTRIBUTES = ("pk", "sk", "hash", "hash_version", "version")


@dataclass(frozen=True)
class FunctionSpec:
    """One Lambda function: its handler, size, and what it may touch."""

    name: str
    memory_mb: int
    timeout_s: int
    tables: dict[str, tuple[str, ...]]  # table -> the DynamoDB actions the function's adapters call on it
    # Reserved concurrency: a cap (one function's flood cannot starve the others or the account) and a
    # guarantee. 100 in all: the account keeps 100 unreserved, so a deploy needs a concurrency quota >= 200.
    reserved_concurrency: int = 20
    aoss_write: bool = False
    rerank: bool = False
    graph_hash_cache: bool = False  # answers graph searches (graphSourceHash) without the graph write grants
    bucket: str = ""  # "" | "r" | "rw"
    own_distributions: tuple[str, ...] = ()  # in this function's own layer only (FUNCTION_DEPS_ASSET_DIR)

    @property
    def handler(self) -> str:
        return f"{self.name}.handler.lambda_handler"


FUNCTIONS = (
    FunctionSpec(
        "search", 1024, 15, {"catalog": DDB_GET, "graph": GRAPH_READ, "keys": DDB_GET, "rate_limit": RATE_COUNT},
        rerank=True, graph_hash_cache=True, reserved_concurrency=40,
    ),
    # recall walks the graph by its name and neighbour partitions only (match_entities without terms, neighbours)
    FunctionSpec("recall", 1024, 15, {"memory": DDB_READ, "graph": ("dynamodb:Query",), "keys": DDB_GET,
                                      "rate_limit": RATE_COUNT}),
    FunctionSpec(
        "snapshot",
        1024,
        29,
        {"snapshot": ("dynamodb:GetItem", "dynamodb:PutItem"), "catalog": DDB_GET, "memory": DDB_READ,
         "graph": GRAPH_READ, "keys": DDB_GET, "rate_limit": RATE_COUNT, "idempotency": IDEMPOTENCY},
        graph_hash_cache=True,
        bucket="rw",
    ),
    FunctionSpec(
        "ingest",
        1536,
        60,
        # ConditionCheckItem: a document commit checks its name still points at it; staged OB1 write-backs
        # Scan + DeleteItem on keys, Scan on memory: forgetting a principal (its keys, its recall traces)
        {"catalog": DDB_READ + DDB_WRITE + CONDITION_CHECK,
         "memory": DDB_READ + DDB_WRITE + CONDITION_CHECK + ("dynamodb:Scan",),
         "graph": GRAPH_READ + ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"),
         "keys": DDB_GET + ("dynamodb:Scan", "dynamodb:DeleteItem"),
         "rate_limit": RATE_COUNT, "idempotency": IDEMPOTENCY},
        aoss_write=True,
        bucket="r",
        own_distributions=("pypdf",),  # PDF uploads (services/extract_pdf.py imports it when a PDF arrives)
    ),
)

# Routes: (method, path, function, authenticated), derived from the API's own route table so the two never drift.
ROUTES = tuple((r.method, r.path, r.function, r.scope is not None) for r in API_ROUTES)
# The web console's files on the API's own stage (infra/components/console.py): public GETs into this function.
CONSOLE_PATHS = ("/console", "/console/{proxy+}")
CONSOLE_FUNCTION = "search"
# Method throttles tighter than the stage default (writes are the expensive path).
METHOD_THROTTLES = MappingProxyType(
    {
        "/api/v2/knowledge/bases/{knowledgeBaseId}/documents/POST": (20, 40),
        "/v1/graph/POST": (20, 40),
        "/v1/snapshots/POST": (50, 100),
    }
)


@dataclass(frozen=True)
class UsageTier:
    name: str
    rate: int
    burst: int
    quota_per_day: int


USAGE_TIERS = (UsageTier("free", 5, 10, 5_000), UsageTier("pro", 50, 100, 500_000))

# WAF rate-based rules: requests per 5-minute window.
WAF_WINDOW_S = 300
WAF_LIMIT_PER_IP = 3000
WAF_LIMIT_PER_API_KEY = 6000
WAF_RETRY_AFTER_S = 60
API_KEY_HEADER = "x-api-key"

# Ingest queue
QUEUE_VISIBILITY_TIMEOUT_S = 6 * 60  # >= 6 x ingest timeout, the Lambda/SQS recommendation
QUEUE_MAX_RECEIVE_COUNT = 5
QUEUE_BATCH_SIZE = 10
# The queue consumer may take at most half of the ingest function's reserved concurrency: API writes keep the rest.
QUEUE_MAX_CONCURRENCY = 10
DLQ_RETENTION_DAYS = 14

# Observability
LOG_RETENTION_DAYS = 30
ALARM_5XX_THRESHOLD = 5  # errors per 5 minutes
ALARM_429_THRESHOLD = 50  # throttled responses per 5 minutes
ALARM_P99_LATENCY_MS = 3000
ALARM_PERIOD_MINUTES = 5
