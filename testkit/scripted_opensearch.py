"""A scripted OpenSearch transport: every request is answered by a function of (method, path, decoded body), and
what was sent is recorded; for the cases the in-memory OpenSearch cannot play (throttling, refusals, lost indexes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentkb.adapters.aws.opensearch.transport import HttpResponse

Answer = Callable[[str, str, Any], tuple[int, Any]]


def decode(path: str, body: bytes | None) -> Any:
    """A request body as sent: JSON, or a `_bulk` body's lines as a list."""
    if not body:
        return None
    if path.endswith("/_bulk"):
        return [json.loads(line) for line in body.decode().splitlines() if line.strip()]
    return json.loads(body)


def empty(path: str) -> Any:
    """What an empty collection answers: no bulk errors, no hits, an empty object otherwise."""
    if path.endswith("/_bulk"):
        return {"errors": False, "items": []}
    return {"hits": {"hits": []}} if path.endswith("/_search") else {}


class Scripted:
    """Answers every request with `answer`'s (status, body); records what was sent (decoded)."""

    def __init__(self, answer: Answer | None = None) -> None:
        self.answer: Answer = answer or (lambda method, path, body: (200, empty(path)))
        self.sent: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        decoded = decode(path, body)
        self.sent.append((method, path, decoded))
        status, payload = self.answer(method, path, decoded)
        return HttpResponse(status, json.dumps(payload).encode() if payload is not None else b"")
