"""Recall through the recall handler: scope, limits, entities, graph leg, budget; every 200 meets the contract."""

from __future__ import annotations

from typing import Any

from agentkb.adapters.embedded.embedder import local_tokenizer
from agentkb.composition import Ports
from tests.handlers.recall.recall_helpers import names, recall, write
from tests.helpers import embedded_db, mint


def test_a_workspace_the_key_cannot_reach_is_404(rw_key: str, fake_embedder: Any) -> None:
    out = recall(rw_key, expect=404, workspace_id="ws2")
    assert out["error"]["code"] == "NOT_FOUND"


def test_response_shape(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "deploy", "x" * 300 + " deploy billing", description="how we deploy", project_id="p1")
    out = recall(rw_key, query="deploy billing", project_id="p1")
    item = out["results"][0]
    assert out["k"] == 10 and out["query"] == "deploy billing" and isinstance(out["elapsed_ms"], int)
    assert item["snippet"] == "x" * 200 and item["namespace"] == "p1" and item["source"] == "direct"
    assert abs(item["score"] - (1 - item["distance"])) < 1e-6 and 0 <= item["score"] <= 1
    assert out["backend_invoked"] == "local" and "vec_degraded" not in out
    assert out["results"] == out["direct_matches"] + out["graph_matches"]


def test_audiences_nest_from_personal_to_organization(bundle: Ports, rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "org", "shared rule deploy", visibility="organization")
    write(rw_key, "ws", "shared rule deploy", visibility="workspace")
    write(rw_key, "proj", "shared rule deploy", visibility="project", project_id="p1")
    write(rw_key, "chan", "shared rule deploy", visibility="channel", channel_id="c1")
    write(rw_key, "mine", "shared rule deploy", visibility="personal")
    q = {"query": "shared rule deploy", "project_id": "p1", "channel": {"kind": "slack", "id": "c1"}}
    seen = {aud: set(names(recall(rw_key, scope={"visibility": aud}, **q)))
            for aud in ("organization", "workspace", "project", "channel", "personal")}
    assert seen["organization"] == {"org"}
    assert seen["workspace"] == {"org", "ws"}
    assert seen["project"] == {"org", "ws", "proj"}
    assert seen["channel"] == {"org", "ws", "proj", "chan"}
    assert seen["personal"] == {"org", "ws", "proj", "chan", "mine"}
    # Another project, another channel, another principal: their narrow memories fall away.
    other = {"query": "shared rule deploy", "project_id": "p2", "channel": {"kind": "slack", "id": "c2"}}
    assert set(names(recall(rw_key, scope={"visibility": "personal"}, **other))) == {"org", "ws", "mine"}
    bob = mint(bundle, ["ws1"], ["api:read"], "bob")
    assert "mine" not in names(recall(bob, scope={"visibility": "personal"}, **q))


def test_project_only_keeps_the_request_project(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "a", "cache settings", project_id="p1")
    write(rw_key, "b", "cache settings", project_id="p2")
    write(rw_key, "c", "cache settings")
    assert set(names(recall(rw_key, query="cache settings", project_id="p1"))) == {"a", "b", "c"}
    only = recall(rw_key, query="cache settings", project_id="p1", scope={"project_only": True})
    assert names(only) == ["a"]


def test_confirmed_stale_and_expired(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "ok", "token rotation")
    write(rw_key, "unconfirmed", "token rotation", confirmed=False)
    write(rw_key, "stale", "token rotation", stale=True)
    write(rw_key, "expired", "token rotation", valid_until="2001-01-01T00:00:00Z")
    write(rw_key, "future", "token rotation", valid_until="2999-01-01")
    assert set(names(recall(rw_key, query="token rotation"))) == {"ok", "future"}
    assert set(names(recall(rw_key, query="token rotation", scope={"include_unconfirmed": True}))) == {
        "ok", "future", "unconfirmed"}
    assert set(names(recall(rw_key, query="token rotation", scope={"include_stale": True}))) == {
        "ok", "future", "stale", "expired"}


def test_sensitivity_flags_must_be_declared(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "plain", "retry policy")
    write(rw_key, "code", "retry policy", sensitivity={"contains_code": True})
    write(rw_key, "customer", "retry policy", sensitivity={"contains_customer_data": True})
    write(rw_key, "meeting", "retry policy", sensitivity={"contains_private_meeting_data": True, "contains_code": True})
    assert names(recall(rw_key, query="retry policy")) == ["plain"]
    assert set(names(recall(rw_key, query="retry policy", sensitivity={"contains_code": True}))) == {"plain", "code"}
    everything = {"contains_code": True, "contains_customer_data": True, "contains_private_meeting_data": True}
    assert len(recall(rw_key, query="retry policy", sensitivity=everything)["results"]) == 4


def test_recency_days_limits_to_recent_writes(bundle: Ports, rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "old", "queue tuning")
    write(rw_key, "new", "queue tuning")
    embedded_db(bundle).connection().execute(
        "UPDATE memories SET updated_at = updated_at - 40 * 86400 WHERE name = 'old'")
    assert set(names(recall(rw_key, query="queue tuning"))) == {"old", "new"}
    assert names(recall(rw_key, query="queue tuning", limits={"recency_days": 30})) == ["new"]
    assert set(names(recall(rw_key, query="queue tuning", limits={"recency_days": 60}))) == {"old", "new"}


def test_max_items_is_k(rw_key: str, fake_embedder: Any) -> None:
    for i in range(6):
        write(rw_key, f"m{i}", f"log retention {i}")
    out = recall(rw_key, query="log retention", limits={"max_items": 3})
    assert out["k"] == 3 and len(out["results"]) == 3


def test_max_tokens_drops_lowest_ranked_items_first(rw_key: str, fake_embedder: Any) -> None:
    for i in range(8):
        write(rw_key, f"m{i}", f"alerting thresholds {i} " + "detail " * 40, description="alerting " * 10)
    full = recall(rw_key, query="alerting thresholds", limits={"max_tokens": 20000})
    cut = recall(rw_key, query="alerting thresholds", limits={"max_tokens": 150})
    tok = local_tokenizer()
    used = sum(tok.count(i[f]) for i in cut["results"] for f in ("name", "description", "snippet"))
    assert used <= 150 and cut["truncated"] is True
    assert [i["memory_id"] for i in cut["results"]] == [i["memory_id"] for i in full["results"]][:len(cut["results"])]
    surface = cut["agent_surface"]
    assert surface["input_count"] == 8 and surface["output_count"] == len(cut["results"]) >= 1
    assert surface["dropped"] == 8 - surface["output_count"] and surface["output_truncated"] is True
    assert full["truncated"] is False and "agent_surface" not in full  # nothing cut: the unshaped envelope


def test_max_tokens_cuts_the_snippet_when_one_item_is_too_big(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "big", "incident review " + "word " * 300, description="postmortem " * 80)
    out = recall(rw_key, query="incident review", limits={"max_tokens": 100})
    item = out["results"][0]
    tok = local_tokenizer()
    assert sum(tok.count(item[f]) for f in ("name", "description", "snippet")) <= 100
    assert item["snippet"] == "" and out["agent_surface"]["content_truncated"] is True and out["truncated"] is True


def test_entities_lift_linked_memories(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "plain", "billing invoices retry")
    write(rw_key, "linked", "billing invoices retry", entities={"customers": ["Acme"]})
    assert names(recall(rw_key, query="billing invoices retry"))[0] == "plain"  # tie broken by id
    lifted = recall(rw_key, query="billing invoices retry", entities={"customers": ["acme"]})
    assert names(lifted)[0] == "linked"
