"""OB1's own clients against agentkb on the AWS adapters, without an AWS account.

The local gateway (agentkb.local.server) serves the real Lambda handlers in this process with AGENTKB_BACKEND=aws:
DynamoDB, Secrets Manager, S3 and SQS are moto (`mock_aws`, shared by the gateway's threads), OpenSearch Serverless
is the in-memory fake of testkit/fake_opensearch.py and Bedrock the deterministic fake embedder of
testkit/bedrock.py (feature-hashed words). Everything else - handlers, gate, services, the DynamoDB memory
store with its OpenSearch legs, the key store - is what runs on AWS.

    python -m bench.ob1.smoke_aws smoke PATH/TO/live-smoke.mjs   # OB1's smoke harness (node); exit status is its
    python -m bench.ob1.smoke_aws serve [--port 8788]            # serve until ^C; prints the endpoint and a key

OB1's harness and plugins are FSL-licensed and stay outside this repository: pass the path of a copy.
tests/e2e/test_ob1_smoke_aws.py runs the harness this way when node and OB1_SMOKE_HARNESS are available.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REGION = "eu-west-1"
WORKSPACE = "ob1-staging"  # the harness's default workspace
Mint = Callable[[list[str], list[str], str], str]


def _environment(names: dict[str, str]) -> dict[str, str]:
    """AGENTKB_* as the CDK stack sets them (backend=aws), for the moto resources `names` (table -> name...)."""
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
           "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION, "POWERTOOLS_METRICS_DISABLED": "true",
           "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_LOG_LEVEL": "WARNING", "AGENTKB_BACKEND": "aws",
           "AGENTKB_OPENSEARCH_ENDPOINT": "https://local.eu-west-1.aoss.amazonaws.com",
           "AGENTKB_EMBEDDING_MODEL": "amazon.titan-embed-text-v2:0", "AGENTKB_EMBEDDING_DIMENSION": "256"}
    env.update(names)
    return env


def _provision() -> dict[str, str]:
    """The tables of infra/constants.py, the pepper secret, the bucket and the ingest queue, in moto."""
    import boto3

    from infra import constants as c

    ddb = boto3.client("dynamodb", region_name=REGION)
    names: dict[str, str] = {}
    for name, (pk, sk, _ttl) in c.TABLES.items():
        table = f"agentkb-local-{name.replace('_', '-')}"
        keys = [{"AttributeName": pk, "KeyType": "HASH"}] + ([{"AttributeName": sk, "KeyType": "RANGE"}] if sk
                                                             else [])
        ddb.create_table(TableName=table, KeySchema=keys, BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": k["AttributeName"], "AttributeType": "S"}
                                               for k in keys])
        names[f"AGENTKB_{name.upper()}_TABLE"] = table
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="agentkb-local-pepper", SecretString="pepper-" + "x" * 57)
    boto3.client("s3", region_name=REGION).create_bucket(
        Bucket="agentkb-local-documents", CreateBucketConfiguration={"LocationConstraint": REGION})
    queue = boto3.client("sqs", region_name=REGION).create_queue(QueueName="agentkb-local-ingest")["QueueUrl"]
    names.update({"AGENTKB_SECRET_ARN": secret["ARN"], "AGENTKB_BUCKET": "agentkb-local-documents",
                  "AGENTKB_INGEST_QUEUE_URL": queue})
    return names


@contextmanager
def aws_gateway(port: int = 0) -> Iterator[tuple[str, Mint]]:
    """(base URL, key minter) of a local gateway over the AWS adapters (moto + fakes), stopped on exit."""
    from moto import mock_aws

    from agentkb.composition import get_ports, reset_ports
    from agentkb.config import reset_settings
    from agentkb.local.server import make_server
    from agentkb.services.access.api_keys import create_api_key
    from testkit.bedrock import FakeAgentRuntime, FakeBedrockRuntime
    from testkit.fake_opensearch import FakeOpenSearch
    from testkit.moto_aws import one_backup_per_table, route_to_doubles
    from testkit.patches import Patches

    saved = dict(os.environ)
    os.environ.update(_environment({}))
    with mock_aws(), Patches() as patch:
        os.environ.update(_environment(_provision()))
        fakes: dict[str, Any] = {"bedrock-runtime": FakeBedrockRuntime(), "bedrock-agent-runtime": FakeAgentRuntime()}
        route_to_doubles(patch, fakes, FakeOpenSearch())
        one_backup_per_table(patch)  # moto's transaction rollback copy, once per table (testkit/moto_aws.py)
        reset_settings()
        reset_ports()
        server = make_server("127.0.0.1", port)
        threading.Thread(target=server.serve_forever, daemon=True).start()

        def mint(workspaces: list[str], scopes: list[str], principal: str) -> str:
            ports = get_ports()
            return create_api_key(ports.keys, ports.secrets, workspaces, scopes, principal)[0]

        try:
            yield f"http://127.0.0.1:{server.server_port}", mint
        finally:
            server.shutdown()
            server.server_close()
            reset_settings()
            reset_ports()
            os.environ.clear()
            os.environ.update(saved)


def run_smoke(harness: Path, endpoint: str, key: str, run_id: str = "aws") -> tuple[int, dict[str, Any] | None, str]:
    """(exit status, its JSON summary or None, stderr) of OB1's smoke harness against `endpoint`."""
    env = {**os.environ, "OB1_AGENT_MEMORY_ENDPOINT": endpoint, "OB1_AGENT_MEMORY_KEY": key,
           "OB1_AGENT_MEMORY_WORKSPACE_ID": WORKSPACE, "OB1_AGENT_MEMORY_RUN_ID": run_id}
    done = subprocess.run(["node", str(harness)], env=env, capture_output=True, text=True, timeout=300, check=False)
    try:
        summary = json.loads(done.stdout)
    except json.JSONDecodeError:
        summary = None
    return done.returncode, summary, done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    smoke = commands.add_parser("smoke", help="run OB1's live-smoke.mjs against the AWS adapters")
    smoke.add_argument("harness", type=Path)
    serve = commands.add_parser("serve", help="serve the AWS adapters locally and print a key")
    serve.add_argument("--port", type=int, default=8788)
    args = parser.parse_args()
    port = args.port if args.command == "serve" else 0
    with aws_gateway(port) as (base, mint):
        key = mint([WORKSPACE], ["api:read", "api:write"], "ob1-client")
        if args.command == "serve":
            print(json.dumps({"endpoint": f"{base}/ob1", "key": key, "workspace_id": WORKSPACE}), flush=True)
            threading.Event().wait()
        status, summary, stderr = run_smoke(args.harness, f"{base}/ob1", key)
        print(json.dumps(summary, indent=2) if summary else stderr)
        return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
