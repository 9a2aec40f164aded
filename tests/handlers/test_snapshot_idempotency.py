"""POST /v1/snapshots on the embedded engine: one build per (workspace, runId, attemptId) at a time."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from agentkb.composition import Ports
from agentkb.local.lambda_context import LocalLambdaContext
from agentkb.models.idempotency import IdempotentCall
from agentkb.models.snapshot import CreateSnapshotRequest
from agentkb.services.snapshot.service import IDEMPOTENCY_SCOPE, request_fingerprint, snapshot_id_for
from tests.helpers import body_of, handler, response_headers, rest_event


def snapshot_body(**extra: Any) -> dict[str, Any]:
    return {"runId": str(uuid.uuid4()), "attemptId": str(uuid.uuid4()),
            "scope": {"workspaceId": "ws1", "maxClassification": "internal"},
            "budget": {"maxTokens": 500, "reservedForOutput": 0}, "task": "Rotate the credentials.", **extra}


def post(key: str, body: dict[str, Any]) -> dict[str, Any]:
    event = rest_event("POST", "/v1/snapshots", body, key=key)
    return handler("snapshot")(event, LocalLambdaContext(function_name="agentkb-snapshot"))  # type: ignore[no-any-return]


def test_a_duplicate_while_another_process_builds_answers_503_then_the_snapshot(bundle: Ports, rw_key: str) -> None:
    body = snapshot_body()
    request = CreateSnapshotRequest.model_validate(body)
    call = IdempotentCall(IDEMPOTENCY_SCOPE, snapshot_id_for("ws1", request.runId, request.attemptId),
                          request_fingerprint(request))
    started, release = threading.Event(), threading.Event()

    def build_elsewhere() -> dict[str, Any]:
        started.set()
        assert release.wait(30)
        return {"snapshotId": call.key}

    # Given another process (its own SQLite connection) building the same attempt
    other = threading.Thread(target=lambda: bundle.idempotency.run_once(call, build_elsewhere), daemon=True)
    other.start()
    assert started.wait(30)
    busy = post(rw_key, body)
    changed = post(rw_key, {**body, "task": "Something else."})
    release.set()
    other.join(30)
    # Then the duplicate is told to retry, in the one envelope; a different body is the usual 409
    assert busy["statusCode"] == 503, busy["body"]
    assert response_headers(busy)["retry-after"] == "2"
    assert body_of(busy)["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert body_of(busy)["error"]["details"] == {"reason": "in_progress"}
    assert changed["statusCode"] == 409 and body_of(changed)["error"]["code"] == "CONFLICT"
    # And once the key is free the retry gets a snapshot (built here: the stand-in stored none), then replays it
    built, replayed = post(rw_key, body), post(rw_key, body)
    assert (built["statusCode"], replayed["statusCode"]) == (201, 200)
    assert built["body"] == replayed["body"]


def test_a_context_that_cannot_tell_its_remaining_time_is_no_deadline(rw_key: str) -> None:
    # Given a caller whose context object has no get_remaining_time_in_millis (a bare test double, a script)
    from types import SimpleNamespace

    bare = SimpleNamespace(function_name="fn", memory_limit_in_mb=512, aws_request_id="req-1",
                           invoked_function_arn="arn:aws:lambda:eu-west-1:123456789012:function:fn")
    body = snapshot_body()
    first = handler("snapshot")(rest_event("POST", "/v1/snapshots", body, key=rw_key), bare)
    # When the next snapshot is built outside any request (the router still holds that context)
    from agentkb.api.routes.snapshot import snapshot_deps
    from agentkb.composition import get_ports
    from agentkb.models.domain import Principal
    from agentkb.services.snapshot.service import create_snapshot

    principal = Principal(id="svc", workspaces=("ws1",), scopes=("api:read", "api:write"))
    later = create_snapshot(CreateSnapshotRequest.model_validate(snapshot_body()), principal,
                            snapshot_deps(get_ports()))
    # Then both are built: the in-progress claim falls back to the fixed lease instead of failing
    assert first["statusCode"] == 201, first["body"]
    assert later.status == 201
