"""The ingest queue's idempotency key: what makes two queued messages the same work."""

from __future__ import annotations

import json
from typing import Any

from agentkb.services.ingest.queue import message_key


def s3(key: str = "uploads/ws1/kb-1/a.md", **obj: Any) -> str:
    return json.dumps({"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
                                    "s3": {"bucket": {"name": "docs"}, "object": {"key": key, **obj}}}]})


def test_json_messages_are_keyed_on_their_canonical_body() -> None:
    body = {"knowledgeBaseId": "kb-1", "workspaceId": "ws1", "name": "a.md", "content": "text"}
    assert message_key(json.dumps(body)) == message_key(json.dumps(dict(reversed(body.items())), indent=2))
    assert message_key(json.dumps(body)) != message_key(json.dumps({**body, "content": "other text"}))
    assert message_key(json.dumps(body)).startswith("json:")


def test_s3_notifications_are_keyed_on_the_object_version() -> None:
    first = s3(eTag="e1", sequencer="0001", size=10)
    assert message_key(first) == message_key(s3(eTag="e1", sequencer="0001", size=99))  # size is not identity
    assert message_key(first) != message_key(s3(eTag="e1", sequencer="0002"))  # a new upload of the same key
    assert message_key(first) != message_key(s3(key="uploads/ws1/kb-1/b.md", eTag="e1", sequencer="0001"))
    assert message_key(s3(versionId="v1")) != message_key(s3(versionId="v2"))
    assert message_key(first).startswith("s3:")


def test_anything_else_is_keyed_on_its_bytes() -> None:
    assert message_key("not json").startswith("raw:")
    assert message_key("not json") != message_key("not json!")
    assert message_key('{"n": 1e400}').startswith(("raw:", "json:"))  # never raises
    assert message_key('"\\ud800"').startswith("raw:")  # a lone surrogate has no canonical form
    assert message_key(json.dumps({"Records": ["x", 1]})).startswith("s3:")
