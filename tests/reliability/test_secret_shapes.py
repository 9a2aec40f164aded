"""The red team's secret shapes (2026-12-01) on every write surface: `/v1/memories`, OB1 write-back, OB1 review
edits (422, nothing stored, the secret never echoed) and document ingest (flagged per chunk in a `flag` knowledge
base, 422 with nothing stored in a `refuse` one). Secrets are random characters of the documented shapes."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from typing import Any

import pytest

from agentkb.composition import Ports
from tests.handlers.recall.recall_helpers import memory_body
from tests.helpers import body_of, invoke, mint, rest_event
from tests.ob1_client import Ob1Client, writeback_payload
from tests.unit.recall.fake_embedders import HashEmbedder

_rng = random.Random(1201)
B64, HEX = string.ascii_letters + string.digits + "/+", "0123456789abcdef"


def _r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


PEM_BODY = _r(string.ascii_letters + string.digits, 64)
SHAPES = {
    "slack_xapp": f"app token xapp-1-A{_r(string.ascii_uppercase + string.digits, 10)}-{_r(string.digits, 13)}-"
                  f"{_r(HEX, 64)}",
    "slack_xoxc": f"session xoxc-{_r(string.digits, 12)}-{_r(string.digits, 12)}-{_r(string.digits, 13)}-"
                  f"{_r(HEX, 64)}",
    "secret_access_key_without_aws": f"secret_access_key = {_r(B64, 40)}",
    "aws_secret_in_prose": f"For the bucket sync use the key {_r(B64, 40)} with the staging user.",
    "pem_lowercase": f"-----begin rsa private key-----\n{PEM_BODY}\n-----end rsa private key-----",
    "pem_double_spaced": f"-----BEGIN  RSA  PRIVATE KEY-----\n{PEM_BODY}\n-----END  RSA  PRIVATE KEY-----",
}
Surface = Callable[[str, str], tuple[int, Any]]


def _call(method: str, path: str, key: str, body: Any, **kw: Any) -> tuple[int, Any]:
    response = invoke("ingest", rest_event(method, path, body, key=key, **kw))
    return response["statusCode"], body_of(response)


def memories(key: str, text: str) -> tuple[int, Any]:
    return _call("POST", "/v1/memories", key, memory_body("deploy-notes", f"notes: {text}"))


def writeback(key: str, text: str) -> tuple[int, Any]:
    payload = writeback_payload("ws1", "red-team")
    payload["memory_payload"]["lessons"] = [f"Remember: {text}"]
    code, answer, _ = Ob1Client(key).call("POST", "/writeback", payload)
    return code, answer


def review_edit(key: str, text: str) -> tuple[int, Any]:
    client = Ob1Client(key)
    written = client.ok("POST", "/writeback", writeback_payload("ws1", "clean"))
    memory_id = written["memories"][0]["memory_id"]
    code, answer, _ = client.call("PATCH", f"/memories/{memory_id}/review",
                                  {"action": "edit", "content": f"Edited: {text}"})
    return code, answer


def document_refused(key: str, text: str) -> tuple[int, Any]:
    kb = _call("POST", "/api/v2/knowledge/bases", key, {"workspaceId": "ws1", "name": "refusing",
                                                          "secretPolicy": "refuse"})[1]["data"]["id"]
    status, out = _call("POST", f"/api/v2/knowledge/bases/{kb}/documents", key,
                        {"workspaceId": "ws1", "name": "notes.md", "content": f"Deploy notes.\n\n{text}\n"})
    listed = _call("GET", f"/api/v2/knowledge/bases/{kb}/documents", key, None, query={"workspaceId": "ws1"})[1]
    assert listed["data"] == []  # nothing stored
    return status, out


SURFACES: dict[str, Surface] = {"v1_memories": memories, "ob1_writeback": writeback, "ob1_review_edit": review_edit,
                                "document_refuse": document_refused}


@pytest.fixture()
def key(bundle: Ports, override_ports: Any) -> str:
    """A read-write key of ws1, with the hash embedder in place of the model (fast, deterministic)."""
    minted = mint(bundle, ["ws1"], ["api:read", "api:write"], "red-team")
    override_ports(embedder=HashEmbedder())
    return minted


@pytest.mark.parametrize("surface", sorted(SURFACES))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_surface_refuses_the_red_team_shapes(key: str, surface: str, shape: str) -> None:
    secret = SHAPES[shape]
    status, out = SURFACES[surface](key, secret)
    assert status == 422, out
    raw = json.dumps(out)
    assert all(part not in raw for part in secret.split() if len(part) >= 16)  # never echoed


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_flagging_knowledge_base_flags_the_red_team_shapes(key: str, shape: str) -> None:
    kb = _call("POST", "/api/v2/knowledge/bases", key, {"workspaceId": "ws1", "name": "flagging"})[1]["data"]["id"]
    status, out = _call("POST", f"/api/v2/knowledge/bases/{kb}/documents", key,
                        {"workspaceId": "ws1", "name": "notes.md", "content": f"Deploy notes.\n\n{SHAPES[shape]}\n"})
    assert status == 201 and out["data"]["secretChunks"] == [0], out
