"""A log line carries the ids of the request that logged it, also when the local gateway runs requests at once.

Powertools' `inject_lambda_context` appends the invocation's keys (function_request_id, correlation_id, cold_start,
the function's name) to the Logger's formatter, one dict per process: in the threaded gateway a request's line
showed whichever request had started last. Here four memory writes meet inside their handlers (in the embedder)
and each logs before and after the meeting; every line must show its own request's ids.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import urllib.request
from typing import Any

import pytest

from agentkb.api.observability import logger
from agentkb.composition import Ports

CONCURRENT = 4


class MeetingEmbedder:
    """The real embedder; a text naming `probe-N` logs, waits until every probe is inside its handler, logs again."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.meeting = threading.Barrier(CONCURRENT, timeout=60)

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed_query(text))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        probe = next((m.group(0) for m in map(re.compile(r"probe-\d+").search, texts) if m), None)
        if probe:
            logger.info("probe before", extra={"probe": probe})
            self.meeting.wait()
            logger.info("probe after", extra={"probe": probe})
        return list(self.inner.embed_documents(texts))


class Captured(logging.Handler):
    """Every line the agentkb Logger writes, formatted by its own formatter in the thread that logged it."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(logger.registered_formatter.format(record)))


def _write(base: str, key: str, probe: str) -> int:
    body = {"workspace_id": "ws1", "visibility": "workspace", "type": "note", "name": probe,
            "body": f"{probe}: the deploy window is Friday."}
    request = urllib.request.Request(f"{base}/v1/memories", data=json.dumps(body).encode(), method="POST",
                                     headers={"X-API-Key": key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return int(response.status)


def test_each_log_line_carries_its_own_requests_ids(bundle: Ports, rw_key: str, override_ports: Any,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from agentkb.local.server import make_server

    # Given the threaded gateway, and four memory writes that meet inside their handlers
    override_ports(embedder=MeetingEmbedder(bundle.embedder))
    captured = Captured()
    logger._logger.addHandler(captured)
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    statuses: list[int] = []
    try:
        writers = [threading.Thread(target=lambda n=n: statuses.append(_write(base, rw_key, f"probe-{n}")))
                   for n in range(CONCURRENT)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(120)
    finally:
        logger._logger.removeHandler(captured)
        server.shutdown()
        server.server_close()
    assert statuses == [201] * CONCURRENT
    # Then each request's lines, before and after the others started, show one pair of ids, and no two requests
    # show the same pair
    ids: dict[str, set[tuple[str, str]]] = {}
    for line in captured.lines:
        if "probe" in line:
            ids.setdefault(line["probe"], set()).add((line.get("correlation_id"), line.get("function_request_id")))
    assert sorted(ids) == [f"probe-{n}" for n in range(CONCURRENT)]
    assert all(len(pairs) == 1 for pairs in ids.values()), ids
    assert len({pair for pairs in ids.values() for pair in pairs}) == CONCURRENT, ids
    assert all(None not in pair for pairs in ids.values() for pair in pairs), ids
    # And the gateway's access lines name the same correlation ids
    access = [line.split() for line in capsys.readouterr().err.splitlines() if " POST /v1/memories 201 " in line]
    assert {fields[-1] for fields in access} == {pair[0] for pairs in ids.values() for pair in pairs}


def test_invocation_keys_are_the_threads_own_and_other_keys_are_shared() -> None:
    # Given keys appended in this thread, When another thread logs, Then it sees only the shared ones
    captured = Captured()
    logger._logger.addHandler(captured)
    try:
        logger.append_keys(correlation_id="mine", function_request_id="req-1", deployment="shared-value")
        other = threading.Thread(target=lambda: logger.info("other thread"))
        other.start()
        other.join(30)
        logger.info("this thread")
        assert logger.get_correlation_id() == "mine"
    finally:
        logger._logger.removeHandler(captured)
        logger.remove_keys(["deployment"])
        logger.thread_safe_clear_keys()
    lines = {line["message"]: line for line in captured.lines}
    assert lines["other thread"]["deployment"] == "shared-value"
    assert "correlation_id" not in lines["other thread"] and "function_request_id" not in lines["other thread"]
    assert (lines["this thread"]["correlation_id"], lines["this thread"]["function_request_id"]) == ("mine", "req-1")
