"""POST /v1/memories through the ingest handler: revisions, idempotency, audiences, graph, firewall."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.models.graph.api import GraphSearchRequest
from agentkb.services.graph.search import search_graph
from agentkb.services.graph.write import parse_graph_write, upsert_graph
from tests.conftest import mint
from tests.graph_payloads import demo
from tests.handlers.recall.recall_helpers import call, memory_body, names, recall, write


def test_write_returns_201_with_an_integer_memory_id_and_recall_finds_it(rw_key: str, fake_embedder: Any) -> None:
    out = write(rw_key, "deploy-billing", "We deploy billing with CDK", description="deploy notes")
    assert isinstance(out["memory_id"], int) and out["revision"] == 1 and out["supersedes"] is None
    assert out["name"] == "deploy-billing"
    # Read-after-write: the very next recall sees it.
    assert names(recall(rw_key, query="deploy billing")) == ["deploy-billing"]


def test_rewriting_a_name_supersedes_the_old_revision(rw_key: str, fake_embedder: Any) -> None:
    first = write(rw_key, "runbook", "restart the workers")
    second = write(rw_key, "runbook", "drain then restart the workers")
    assert second["revision"] == 2 and second["supersedes"] == first["memory_id"]
    assert second["memory_id"] != first["memory_id"]
    live = recall(rw_key, query="restart the workers")
    assert [i["memory_id"] for i in live["results"]] == [second["memory_id"]]
    kept = recall(rw_key, query="restart the workers", scope={"include_stale": True})
    assert {i["memory_id"] for i in kept["results"]} == {first["memory_id"], second["memory_id"]}


def test_an_unchanged_rewrite_stores_nothing_new(rw_key: str, fake_embedder: Any) -> None:
    first = write(rw_key, "same", "identical body")
    again = write(rw_key, "same", "identical body", expect=200)
    assert again["memory_id"] == first["memory_id"] and again["revision"] == 1


def test_idempotency_key_replays_and_conflicts(rw_key: str, fake_embedder: Any) -> None:
    first = write(rw_key, "incident-42", "db failover", idempotency_key="k-1")
    replay = write(rw_key, "incident-42", "db failover", expect=200, idempotency_key="k-1")
    assert replay["memory_id"] == first["memory_id"]
    status, body, _ = call("ingest", "/v1/memories",
                           memory_body("incident-42", "a different body", idempotency_key="k-1"), rw_key)
    assert status == 409 and body["error"]["code"] == "CONFLICT"
    out = recall(rw_key, query="db failover", scope={"include_stale": True})
    assert [i["memory_id"] for i in out["results"]] == [first["memory_id"]]  # no duplicate stored


@pytest.mark.parametrize(("fields", "path"), [
    ({"visibility": "channel"}, "channel_id"),
    ({"visibility": "project"}, "project_id"),
    ({"relations": [{"from": "alice", "to": "nobody", "kind": "works-on"}], "entities": {"people": ["alice"]}},
     "relations.0.to"),
    ({"type": "diary"}, "type"),
    ({"valid_until": "next tuesday"}, "valid_until"),
    ({"relations": [{"from": "a", "to": "b", "kind": "x", "weight": 1.5}], "entities": {"topics": ["a", "b"]}},
     "relations.0.weight"),
    ({"surprise": True}, "surprise"),
])
def test_invalid_writes_are_400_with_paths(rw_key: str, fake_embedder: Any, fields: dict[str, Any],
                                           path: str) -> None:
    status, body, _ = call("ingest", "/v1/memories", memory_body("m", "text", **fields), rw_key)
    assert status == 400, body
    assert any(d["path"].startswith(path) for d in body["error"]["details"]), body


def test_personal_memories_belong_to_the_writer_by_default(bundle: Ports, rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "my-note", "alice private preference for tabs", visibility="personal")
    bob = mint(bundle, ["ws1"], ["api:read", "api:write"], "bob")
    mine = recall(rw_key, query="preference for tabs", scope={"visibility": "personal"})
    theirs = recall(bob, query="preference for tabs", scope={"visibility": "personal"})
    assert names(mine) == ["my-note"] and names(theirs) == []


def test_entities_and_weighted_relations_land_in_the_one_graph(bundle: Ports, rw_key: str,
                                                             fake_embedder: Any) -> None:
    out = write(rw_key, "ownership", "alice maintains billing", entities={"people": ["Alice"], "repos": ["billing"]},
                relations=[{"from": "Alice", "to": "billing", "kind": "maintains", "weight": 0.8}])
    graph = bundle.graph
    # Names that match no workspace entity stay in recall's own entity space: ids, never stored graph entities
    assert [i.split(":")[0] for i in out["entity_ids"]] == ["mem-person", "mem-repo"]
    assert graph.entities("ws1", out["entity_ids"]) == []
    edges = graph.neighbours("ws1", out["entity_ids"][:1], 0.0, 10)
    assert [(kind, weight) for _, _, kind, weight in edges] == [("maintains", 0.8)]
    # A second memory naming the same person (any case) links to the same entity.
    again = write(rw_key, "oncall", "alice is on call", entities={"people": ["alice"]})
    assert again["entity_ids"] == out["entity_ids"][:1]


def test_a_memory_naming_a_workspace_entity_attaches_to_it_and_adds_no_stub(bundle: Ports, rw_key: str,
                                                                            fake_embedder: Any) -> None:
    # Given the workspace graph holds svc:billing-api (the demo graph)
    graph = bundle.graph
    upsert_graph(graph, parse_graph_write({**demo(), "workspaceId": "ws1"}))
    before = graph.source_hash("ws1")
    # When a memory names billing-api (as a repo), the payments team (by alias) and something the graph lacks
    out = write(rw_key, "billing-deploys", "billing-api deploys by canary",
                entities={"repos": ["billing-api"], "orgs": ["Payments"], "topics": ["canaries"]},
                relations=[{"from": "Payments", "to": "billing-api", "kind": "owns", "weight": 0.9}])
    # Then it links to the workspace entities; the unknown name stays in recall's space
    assert out["entity_ids"][:2] == ["owner:payments-team", "svc:billing-api"]  # orgs come before repos
    assert out["entity_ids"][2].startswith("mem-topic:")
    # And graph search answers the real entity first, with no memory stub anywhere, on an unchanged graph
    body = search_graph(graph, GraphSearchRequest(workspaceId="ws1", query="billing-api"))
    assert body["entities"][0]["id"] == "svc:billing-api"
    assert not [e for e in (*body["entities"], *body["relatedEntities"]) if e["id"].startswith("mem-")]
    assert graph.source_hash("ws1") == before
    # And recall reaches the memory through the workspace entity
    assert names(recall(rw_key, query="unrelated words", entities={"repos": ["billing-api"]},
                        limits={"max_items": 5})) == ["billing-deploys"]


def test_read_only_keys_cannot_write_and_other_workspaces_are_404(ro_key: str, rw_key: str,
                                                                   fake_embedder: Any) -> None:
    status, body, _ = call("ingest", "/v1/memories", memory_body("m", "text"), ro_key)
    assert status == 403
    status, body, _ = call("ingest", "/v1/memories", {**memory_body("m", "text"), "workspace_id": "ws2"}, rw_key)
    assert status == 404 and body["error"]["code"] == "NOT_FOUND"


SECRETS = {
    "pem": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "aws_id": "use AKIAIOSFODNN7EXAMPLE for the deploy",
    "aws_secret": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github": "token ghp_" + "A1b2C3d4E5" * 4,
    "gitlab": "glpat-" + "x9Y8z7W6v5U4t3S2r1Q0",
    "slack": "xoxb-2048-4096-" + "AbCdEfGhIjKl",
    "openai": "sk-proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8x",
    "stripe": "sk_live_" + "51HqLyjW2aBcDeFgHiJk",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "password": "db password=hG7#kq2!Lp9zR",
    "api_key": 'config: api_key: "Zq8xT4mW9pL2vN7k"',
}


@pytest.mark.parametrize("where", ["body", "description", "name", "entities"])
@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_the_firewall_refuses_secrets_and_stores_nothing(rw_key: str, fake_embedder: Any, kind: str,
                                                         where: str) -> None:
    secret = SECRETS[kind]
    fields: dict[str, Any] = {"description": "ok"}
    body = "harmless text about deploys"
    if where == "body":
        body = f"notes: {secret}"
    elif where == "description":
        fields["description"] = secret[:1024]
    elif where == "entities":
        fields["entities"] = {"topics": [secret[:256]]}
    name = secret[:256] if where == "name" else "leaky"
    status, out, _ = call("ingest", "/v1/memories", memory_body(name, body, **fields), rw_key)
    assert status == 422 and out["error"]["code"] == "UNPROCESSABLE", out
    raw = json.dumps(out)
    assert secret not in raw and secret[8:24] not in raw  # never echoed
    assert recall(rw_key, query="harmless deploys notes", scope={"include_stale": True,
                                                                "include_unconfirmed": True})["results"] == []


@pytest.mark.parametrize("text", [
    "The password policy requires rotation every 90 days.",
    "set password=changeme in the dev compose file only",
    "api_key: ${API_KEY} comes from the environment",
    "We use scikit-learn (sk-learn) for the churn model.",
    "The AWS key rotation runbook lives in docs/keys.md",
])
def test_the_firewall_lets_ordinary_prose_through(rw_key: str, fake_embedder: Any, text: str) -> None:
    write(rw_key, "prose", text)
