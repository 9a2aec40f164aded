"""Recorded API Gateway events (REST v1, HTTP v2, direct invocation) replayed through the real lambda_handlers.

events/<function>/<case>.json + <case>.expected.json ({status, schema, body?}). Keys in events are placeholders
(akb_test_replay_key = read/write, akb_test_readonly_key = read-only) swapped for real keys per test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.domain import EmbeddingProfile, KnowledgeBase
from agentkb.models.ingest import AddDocumentRequest
from agentkb.services.ingest.service import add_document
from agentkb.services.search.tag_filters import assign_slots
from tests.helpers import ROOT, body_of, invoke, mint, validator

EVENTS = ROOT / "events"
WS, KB = "a91c4b2e-6d3f-4e8a-b5c7-0d9e2f1a8c64", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
FUNCTIONS = ("search", "ingest")
# reliability_* cases need more seeding (graph, memories, snapshots): tests/reliability replays the whole corpus.
CASES = sorted((fn, p.name.removesuffix(".expected.json")) for fn in FUNCTIONS
               for p in (EVENTS / fn).glob("*.expected.json") if not p.name.startswith("reliability_"))
PLACEHOLDERS = {"akb_test_replay_key": ["api:read", "api:write"], "akb_test_readonly_key": ["api:read"]}


@pytest.fixture()
def seeded(bundle: Ports) -> dict[str, str]:
    kb = KnowledgeBase(KB, WS, "handbook", None, EmbeddingProfile(bundle.embedder.model_id,
                                                                  bundle.embedder.dimension),
                       assign_slots([("category", "text"), ("version", "number")]), "2026-01-01T00:00:00Z")
    bundle.catalog.create_knowledge_base(kb)
    for name, content, tags in (
            ("reset.md", "To reset your password, open Settings and choose Security.", {"category": "account"}),
            ("billing.md", "Failed payments are retried after 3, 5 and 7 days.", {"category": "billing",
                                                                                "version": 2})):
        add_document(KB, AddDocumentRequest(workspaceId=WS, name=name, content=content, tags=tags), OPERATOR,
                     deps(bundle))
    return {placeholder: mint(bundle, [WS], scopes) for placeholder, scopes in PLACEHOLDERS.items()}


def load(path: Path, keys: dict[str, str]) -> Any:
    text = path.read_text()  # a fresh copy per test: shared fixtures are never mutated
    for placeholder, key in keys.items():
        text = text.replace(placeholder, key)
    return json.loads(text)


@pytest.mark.parametrize(("function", "case"), CASES, ids=[f"{f}/{c}" for f, c in CASES])
def test_replay(function: str, case: str, seeded: dict[str, str]) -> None:
    event = load(EVENTS / function / f"{case}.json", seeded)
    expected = json.loads((EVENTS / function / f"{case}.expected.json").read_text())
    response = invoke(function, event)
    body = body_of(response)
    assert response["statusCode"] == expected["status"], body
    if expected.get("schema"):
        validator(expected["schema"]).validate(body)
    if "body" in expected:
        assert body == expected["body"]
    serialized = json.dumps(body)
    assert all(key not in serialized for key in seeded.values())  # keys never echoed
