"""The 413 on the AWS engine: the key (DynamoDB key store, Secrets Manager pepper) and the rate limiter
(DynamoDB) decide before the size is answered, in REST v1 and HTTP v2 shape."""

from __future__ import annotations

import pytest

from testkit.aws_backend import AwsBackend
from tests.helpers import body_of, http_event, invoke, response_headers, rest_event
from tests.upstream import KNOWLEDGE_SEARCH, assert_upstream

BIG = '{"workspaceId": "' + "x" * (2 * 1024 * 1024) + '"}'
RATE_HEADERS = {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"}


@pytest.mark.parametrize("shape", ["rest", "v2"])
def test_a_valid_keys_413_carries_the_rate_limit_headers(aws_backend: AwsBackend, shape: str) -> None:
    key = aws_backend.key(["ws1"], ["api:read"])
    for presented, status in ((key, 413), (None, 401), ("akb_0000000000000000_nosecret", 401)):
        if shape == "rest":
            event = rest_event("POST", "/v1/recall", None, key=presented, raw_body=BIG)
        else:
            event = http_event("POST", "/v1/recall", None, key=presented)
            event["body"] = BIG
        response = invoke("recall", event)
        headers = set(response_headers(response))
        assert response["statusCode"] == status, body_of(response)
        assert (headers >= RATE_HEADERS) is (status == 413)
        assert_upstream(KNOWLEDGE_SEARCH, body_of(response), status)  # the reference's error envelope
