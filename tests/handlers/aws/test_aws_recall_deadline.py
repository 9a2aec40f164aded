"""A recall on the AWS engine whose memory index is throttled: a 503 with Retry-After inside the invocation's own
time (every OpenSearch call bounded by the Lambda deadline), through the real recall handler."""

from __future__ import annotations

from typing import Any

import pytest

from testkit.moto_aws import AwsEnv
from testkit.scripted_opensearch import Scripted
from tests.memory_records import WS, record


def test_recall_on_a_throttled_index_is_a_503_within_the_invocations_time(aws_settings: AwsEnv,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.adapters.aws.opensearch import transport as aws_http
    from agentkb.composition import get_ports
    from agentkb.services.access.api_keys import create_api_key
    from recall.handler import lambda_handler
    from tests.helpers import body_of, response_headers, rest_event

    deadlines: list[float | None] = []

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        deadlines.append(aws_http._deadline.get())
        return (503, None) if path.endswith("/_search") and "size" in body and "sort" not in body else (403, None)

    monkeypatch.setattr(aws_http, "SigV4Transport", lambda endpoint, region: Scripted(answer))
    bundle = get_ports()
    bundle.memories.insert(record("billing-deploys", body="billing deploys go through the pipeline"))
    key, _ = create_api_key(bundle.keys, bundle.secrets, [WS], ["api:read"], "alice")
    request = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "task_type": "general",
               "query": "how does billing deploy", "scope": {"visibility": "workspace", "project_only": False,
                                                             "include_unconfirmed": False, "include_stale": False},
               "limits": {"max_items": 5, "max_tokens": 2000}, "entities": {},
               "sensitivity": {"contains_code": False, "contains_customer_data": False,
                               "contains_private_meeting_data": False}}

    class Context:
        function_name, memory_limit_in_mb, aws_request_id = "agentkb-recall", 1024, "req-1"
        invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:agentkb-recall"

        @staticmethod
        def get_remaining_time_in_millis() -> int:
            return 1300  # 300 ms for retries after the 1 s margin

    started = len(deadlines)
    response = lambda_handler(rest_event("POST", "/v1/recall", request, key=key, query={"fallback": "fts_only"}),
                              Context())
    assert response["statusCode"] == 503, response["body"]
    assert body_of(response)["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert response_headers(response)["retry-after"] == "5"
    assert deadlines[started:] and all(d is not None for d in deadlines[started:])  # bounded by the invocation
    assert aws_http._deadline.get() is None  # and cleared after it
