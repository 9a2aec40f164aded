"""Records the network exchanges of each function's first request, for bench/coldstart.py --first-response.

    python -m bench.coldstart.record OUT.json

Runs in the dev environment: moto serves DynamoDB, Secrets Manager, S3 and SQS, the test suite's in-memory
OpenSearch serves the collection, and Titan embeddings / Cohere rerank are answered like the handler tests'
fakes. All of it is reached through the same socket stub the measured processes use (bench/coldstart/net.py), so
botocore and the SigV4 transport send real HTTP bytes and the recording holds the raw answers. The workspace is
seeded the way the recorded event corpus expects (testkit/corpus.py), then each function answers its
recorded event (search/hybrid_ok, recall/recall_ok, snapshot/create_ok) from a cold process state: ports, boto3
clients, the secret cache and the query-vector cache are all dropped first, so the exchanges are a cold start's.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from bench.coldstart.env import REGION, lambda_runtime_environment, stack_environment
from bench.coldstart.net import Answer, Request, exchange_record, install

EVENTS = {"search": "search/hybrid_ok", "recall": "recall/recall_ok", "snapshot": "snapshot/create_ok"}
OK = {"search": 200, "recall": 200, "snapshot": 201}


class LiveFakes:
    """The responder while recording: moto for AWS APIs, fakes for OpenSearch and Bedrock; records when asked."""

    def __init__(self, endpoint_host: str) -> None:
        from testkit.bedrock import FakeAgentRuntime
        from testkit.fake_opensearch import FakeOpenSearch

        self.endpoint_host = endpoint_host
        self.opensearch = FakeOpenSearch()
        self.rerank = FakeAgentRuntime()
        self.recorded: list[dict[str, Any]] | None = None

    def __call__(self, request: Request) -> Answer:
        answer = self._answer(request)
        if self.recorded is not None:
            self.recorded.append(exchange_record(request, answer))
        return answer

    def _answer(self, request: Request) -> Answer:
        from testkit.bedrock import titan_embedding

        if request.host == self.endpoint_host:
            found = self.opensearch.request(request.method, request.path, request.body or None, request.headers)
            return Answer(found.status, {"content-type": "application/json"}, found.body)
        if request.host.startswith("bedrock-runtime."):
            answer = titan_embedding(json.loads(request.body))
            return Answer(200, {"content-type": "application/json"}, json.dumps(answer).encode())
        if request.host.startswith("bedrock-agent-runtime."):
            answer = self.rerank.rerank(**json.loads(request.body))
            return Answer(200, {"content-type": "application/json"}, json.dumps(answer).encode())
        return _moto(request)


def _moto(request: Request) -> Answer:
    from botocore.awsrequest import AWSPreparedRequest
    from botocore.compat import HTTPHeaders
    from moto.core.models import botocore_stubber

    headers = HTTPHeaders()
    for name, value in request.headers.items():
        headers[name] = value
    prepared = AWSPreparedRequest(request.method, f"https://{request.host}{request.path}", headers,
                                  request.body, stream_output=False)
    status, answer_headers, body = botocore_stubber.process_request(prepared)
    raw = body if isinstance(body, bytes) else str(body).encode()
    return Answer(int(status), {str(k): str(v) for k, v in dict(answer_headers).items()}, raw)


def _cold() -> None:
    """Forget everything a warm execution environment keeps, so the next request makes a cold start's calls."""

    from agentkb.adapters.aws.dynamodb.tables import aws_client
    from agentkb.composition import reset_ports
    from agentkb.config import reset_settings

    reset_settings()
    reset_ports()
    aws_client.cache_clear()


class _Context:
    function_version, memory_limit_in_mb, aws_request_id = "$LATEST", 1024, "coldstart"

    def __init__(self, name: str) -> None:
        self.function_name = f"agentkb-{name}"
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:agentkb-{name}"

    def get_remaining_time_in_millis(self) -> int:
        return 30000


def record() -> dict[str, Any]:
    from moto import mock_aws
    from moto.core.models import botocore_stubber

    from testkit.moto_aws import provision

    os.environ.update({**lambda_runtime_environment("search", tracing=False), "POWERTOOLS_TRACE_DISABLED": "true",
                       "POWERTOOLS_METRICS_DISABLED": "true"})
    os.environ.pop("LAMBDA_TASK_ROOT")  # recording is not a measurement: no tracer
    with mock_aws():
        botocore_stubber.enabled = False  # botocore sends real bytes to the socket stub, which asks moto
        fakes = LiveFakes("")
        install(fakes)
        made = provision("agentkb-prod")  # the names env.table_name gives the stack's tables
        secret, bucket, queue = made.secret_arn, made.bucket, made.queue_url
        env = stack_environment(secret, bucket, queue)
        os.environ.update(env)
        fakes.endpoint_host = env["AGENTKB_OPENSEARCH_ENDPOINT"].removeprefix("https://")
        _cold()
        from agentkb.composition import get_ports
        from testkit.corpus import EVENTS as EVENT_DIR
        from testkit.corpus import load, seed

        values = seed(get_ports(), snapshot=False, ws1_kb=True)
        events, exchanges = {}, {}
        for name, case in EVENTS.items():
            events[name] = load(EVENT_DIR / f"{case}.json", values)
            _cold()
            fakes.recorded = []
            handler = importlib.import_module(f"{name}.handler")
            answer = handler.lambda_handler(json.loads(json.dumps(events[name])), _Context(name))
            if answer["statusCode"] != OK[name]:
                raise SystemExit(f"{name}: the recorded request failed: {answer}")
            exchanges[name], fakes.recorded = fakes.recorded, None
    return {"env": env, "events": events, "exchanges": exchanges}


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(record()))
