"""Issue 25: a workspace imported as W2 beside its original, on both engines (embedded; AWS on moto + the in-memory
OpenSearch). The original's ids are held, so the copy gets new ones (services/portability/rename.py); every
reference follows, the copy answers what the original answers, its snapshots live under W2's ids for their
attempts, a re-import writes nothing and the original is untouched. Into an engine that holds nothing of the
original, a renamed import keeps every id (its snapshots' aside, which derive from their workspace), and a second
copy beside that one gets new ids. An import killed between storing a page's memory id map and writing the page
finishes under the mapped ids."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import tests.contract.test_portability_engines as engines
from agentkb.composition import Ports
from agentkb.local.events import body_of, rest_event
from agentkb.services.portability import rename, sinks
from agentkb.services.portability.export import ExportRequest, export_workspace
from agentkb.services.portability.importer import import_archive
from agentkb.services.snapshot.service import snapshot_hash, snapshot_id_for
from testkit.corpus import ATTEMPT, KB, MEMORY, RUN, SNAPSHOT_BODY, WS, mint, replay, seed

W2 = "ws-copy"
MEMORY_ATTEMPT = "6d7e8f9a-0b1c-4d2e-8f3a-4b5c6d7e8f9a"
ID_FIELDS = {"knowledge_bases": ("id",), "documents": ("id", "knowledge_base_id"), "chunks": ("id", "document_id")}


class Crash(BaseException):
    """What a kill -9 leaves behind, in process: the write stops where it is (no except clause catches it)."""


def call(method: str, path: str, body: Any, key: str, status: Sequence[int] = (200, 201)) -> dict[str, Any]:
    answer = replay(rest_event(method, path, body, key=key))
    assert answer["statusCode"] in status, (path, answer["body"])
    return body_of(answer)  # type: ignore[no-any-return]


def seed_workspace(ports: Ports) -> None:
    """The recorded events' workspace, plus a superseded chain, a personal memory, a usage report, a merge that
    names another memory and a snapshot that cites memories."""
    key = seed(ports, snapshot=True)["akb_test_replay_key"]
    first = call("POST", "/v1/memories", MEMORY, key)["memory_id"]
    later = call("POST", "/v1/memories", {**MEMORY, "body": "The VPN rollout moved to Monday."}, key)
    assert later["supersedes"] == first
    second = later["memory_id"]
    call("POST", "/v1/memories", {**MEMORY, "name": "my-vpn-notes", "visibility": "personal",
                                  "body": "My VPN client needs the new config profile."}, key)
    recall = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "query": "vpn rollout",
              "scope": {"project_only": False}}
    recalled = call("POST", "/ob1/recall", recall, key)
    used = [m["memory_id"] for m in recalled["memories"]]
    assert used
    call("POST", f"/ob1/recall/{recalled['request_id']}/usage", {"used_memory_ids": used}, key)
    billing = [m for m in ports.archive.memories(WS, 0, 100) if m.detail.name == "billing-deploys"][0]
    call("PATCH", f"/ob1/memories/{billing.detail.memory_id}/review",
         {"action": "merge", "related_memory_id": str(second)}, key)
    scope = {"workspaceId": WS, "maxClassification": "internal"}
    call("POST", "/v1/snapshots", {**SNAPSHOT_BODY, "attemptId": MEMORY_ATTEMPT, "scope": scope, "sources": {
        **SNAPSHOT_BODY["sources"], "memory": {"query": "vpn rollout"}}}, key)


def export(ports: Ports, workspace: str, path: Path) -> Path:
    with path.open("w", encoding="utf-8") as out:
        export_workspace(ports, ExportRequest(workspace), out, "test")
    return path


def sections(path: Path) -> dict[str, list[dict[str, Any]]]:
    return engines.sections(path)


def answers(ports: Ports, workspace: str, kb: str) -> dict[str, Any]:
    """What a client of the workspace sees, by content: documents found, memories recalled, entities found."""
    key = mint(ports, [workspace], ["api:read"], "checker")
    search = call("POST", "/api/v2/knowledge/search", {"workspaceId": workspace, "knowledgeBaseIds": [kb],
                                                      "query": "reset password"}, key)
    recall = call("POST", "/v1/recall", {**engines.RECALL, "workspace_id": workspace}, key)
    graph = call("POST", "/v1/graph/search", {"workspaceId": workspace, "query": "vpn"}, key)
    out = {"documents": [(r["documentName"], r["content"]) for r in search["data"]["results"]],
           "memories": [(r["name"], r["snippet"]) for r in recall["results"]],
           "entities": sorted(e["id"] for e in graph["entities"])}
    assert all(out.values()), out
    return out


def without(record: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in names}


def check_copy(original: dict[str, list[dict[str, Any]]], copied: dict[str, list[dict[str, Any]]]) -> None:
    """The copy holds every record of the original under new ids, each reference pointing at the new ones."""
    assert {s: len(r) for s, r in copied.items()} == {s: len(r) for s, r in original.items()}
    kbs = {o["id"]: c["id"] for o, c in zip(original["knowledge_bases"], copied["knowledge_bases"], strict=True)}
    by_name = {c["name"]: c for c in copied["documents"]}
    docs = {o["id"]: by_name[o["name"]]["id"] for o in original["documents"]}
    for section, fields in ID_FIELDS.items():
        assert not {r["id"] for r in original[section]} & {r["id"] for r in copied[section]}, section
        assert sorted(json.dumps(without(r, *fields), sort_keys=True) for r in copied[section]) == sorted(
            json.dumps(without(r, *fields), sort_keys=True) for r in original[section]), section
    assert {d["knowledge_base_id"] for d in copied["documents"]} == set(kbs.values())
    assert {(c["document_id"], c["id"]) for c in copied["chunks"]} == {
        (docs[c["document_id"]], c["id"].replace(c["document_id"], docs[c["document_id"]])) for c in original["chunks"]}
    memories = {o["memory_id"]: c["memory_id"] for o, c in zip(original["memories"], copied["memories"], strict=True)}
    assert not set(memories) & set(memories.values())
    for o, c in zip(original["memories"], copied["memories"], strict=True):
        assert c["supersedes"] == (None if o["supersedes"] is None else memories[o["supersedes"]])
        assert [r["memory_id"] for r in c["extra"].get("relations", [])] == [
            str(memories[int(r["memory_id"])]) for r in o["extra"].get("relations", [])]
        assert without(c, "memory_id", "supersedes", "extra") == without(o, "memory_id", "supersedes", "extra")
    assert any(m["supersedes"] for m in copied["memories"]) and any(m["visibility"] == "personal"
                                                                    for m in copied["memories"])
    assert any(m["extra"].get("relations") for m in copied["memories"])
    for name in ("graph_entities", "graph_relations", "graph_proofs"):
        assert copied[name] == original[name]  # per workspace on both engines: kept
    traces = list(zip(sorted(original["traces"], key=lambda t: t["created_at"]),
                      sorted(copied["traces"], key=lambda t: t["created_at"]), strict=True))
    assert any(o["usage"] for o, _ in traces)
    for o, c in traces:
        assert c["request_id"] != o["request_id"] and len(c["request_id"]) == len(o["request_id"])
        assert [i["memory_id"] for i in c["items"]] == [memories[i["memory_id"]] for i in o["items"]]
        assert [u[0] for u in c["usage"]] == [memories[u[0]] for u in o["usage"]]
        assert c["request"]["workspace_id"] == W2
    snapshots = {s["attempt_id"]: s for s in copied["snapshots"]}
    for o in original["snapshots"]:
        c = snapshots[o["attempt_id"]]
        assert c["snapshot_id"] == snapshot_id_for(W2, o["run_id"], o["attempt_id"])
        check_snapshot(json.loads(base64.b64decode(o["body"])), json.loads(base64.b64decode(c["body"])), kbs, docs,
                       memories)


def check_snapshot(o: dict[str, Any], c: dict[str, Any], kbs: dict[str, str], docs: dict[str, str],
                   memories: dict[int, int]) -> None:
    assert (c["scope"]["workspaceId"], c["hash"]) == (W2, snapshot_hash(c))
    assert c["scope"].get("knowledgeBaseIds") == ([kbs[k] for k in o["scope"]["knowledgeBaseIds"]]
                                                  if "knowledgeBaseIds" in o["scope"] else None)
    assert [i["content"] for i in c["items"]] == [i["content"] for i in o["items"]]
    for oi, ci in zip(o["items"], c["items"], strict=True):
        if oi["sourceId"] in docs:  # a knowledge chunk
            assert ci["sourceId"] == docs[oi["sourceId"]] and ci["chunkId"].startswith(ci["sourceId"] + ":")
            assert ci["provenance"] == oi["provenance"].replace(WS, W2).replace(
                oi["sourceId"], ci["sourceId"]).replace(KB, kbs[KB])
        elif oi["class"] == "memory":
            old = int(oi["chunkId"].removeprefix("memory:"))
            assert ci["chunkId"] == f"memory:{memories[old]}"
            assert ci["provenance"] == f"agentkb://ws/{W2}/memories/{memories[old]}"
        else:
            assert without(ci, "provenance") == without(oi, "provenance")
    assert any(i["class"] == "memory" for i in o["items"]) or o["attemptId"] != MEMORY_ATTEMPT


@pytest.mark.parametrize("engine", ["embedded", "aws"])
def test_a_copy_beside_its_original_gets_new_ids_and_answers_the_same(
        engine: str, aws_backend: Any, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ports = engines.use_engine(monkeypatch, engine, tmp_path / "engine")
    seed_workspace(ports)
    before = answers(ports, WS, KB)
    archive = export(ports, WS, tmp_path / "ws.jsonl")

    report = import_archive(ports, archive, W2).as_dict()
    assert report["changed"] and report["idsRemapped"] and report["targetWasEmpty"], report
    assert all(s["verified"] for name, s in report["sections"].items() if name != "keys"), report
    original, copied = sections(archive), sections(export(ports, W2, tmp_path / "copy.jsonl"))
    check_copy(original, copied)
    kb2 = copied["knowledge_bases"][0]["id"]
    assert answers(ports, W2, kb2) == before

    # the snapshot of the attempt is W2's: a GET answers it, a POST of that attempt in W2 finds it (built from the
    # request that named W, it is not built again: 409)
    key = mint(ports, [W2], ["api:read", "api:write"], "copier")
    snapshot_id = snapshot_id_for(W2, RUN, ATTEMPT)
    got = replay(rest_event("GET", f"/v1/snapshots/{snapshot_id}", key=key))
    assert got["statusCode"] == 200 and json.loads(got["body"])["snapshotId"] == snapshot_id
    again = {**SNAPSHOT_BODY, "scope": {**SNAPSHOT_BODY["scope"], "workspaceId": W2},
             "sources": {"knowledge": {**SNAPSHOT_BODY["sources"]["knowledge"], "knowledgeBaseIds": [kb2]}}}
    found = call("POST", "/v1/snapshots", again, key, status=(409,))
    assert "already built" in json.dumps(found)
    assert replay(rest_event("GET", f"/v1/snapshots/{snapshot_id}", key=key))["body"] == got["body"]

    second = import_archive(ports, archive, W2).as_dict()
    assert not second["changed"] and second["idsRemapped"], second
    assert export(ports, WS, tmp_path / "after.jsonl").read_bytes() == archive.read_bytes()  # W untouched
    assert sections(export(ports, W2, tmp_path / "copy-again.jsonl")) == copied


@pytest.mark.parametrize("engine", ["embedded", "aws"])
def test_a_renamed_import_into_an_engine_without_the_original_keeps_the_ids(
        engine: str, aws_backend: Any, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = engines.use_engine(monkeypatch, "embedded", tmp_path / "source")
    seed_workspace(source)
    archive = export(source, WS, tmp_path / "ws.jsonl")
    target = engines.use_engine(monkeypatch, engine, tmp_path / "target")
    report = import_archive(target, archive, W2).as_dict()
    assert report["changed"] and not report["idsRemapped"], report
    assert all(s["verified"] for name, s in report["sections"].items() if name != "keys"), report
    original, copied = sections(archive), sections(export(target, W2, tmp_path / "copy.jsonl"))
    for name in ("knowledge_bases", "documents", "chunks", "memories", "graph_entities", "graph_relations"):
        assert copied[name] == original[name], name
    assert [t["request_id"] for t in copied["traces"]] == [t["request_id"] for t in original["traces"]]
    assert sorted(s["snapshot_id"] for s in copied["snapshots"]) == sorted(
        snapshot_id_for(W2, s["run_id"], s["attempt_id"]) for s in original["snapshots"])
    assert not import_archive(target, archive, W2).changed
    # and a second copy from the same archive, beside that one (whose ids are the archive's), gets new ids
    third = import_archive(target, archive, "ws-third").as_dict()
    assert third["idsRemapped"] and all(s["verified"] for n, s in third["sections"].items() if n != "keys"), third


@pytest.mark.parametrize("engine", ["embedded", "aws"])
def test_a_renamed_import_killed_after_a_page_was_mapped_finishes_under_the_mapped_ids(
        engine: str, aws_backend: Any, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a copy beside its original, imported two memories a page
    ports = engines.use_engine(monkeypatch, engine, tmp_path / "engine")
    seed_workspace(ports)
    archive = export(ports, WS, tmp_path / "ws.jsonl")
    monkeypatch.setattr(rename, "PAGE", 2)
    monkeypatch.setattr(sinks, "MEMORY_PAGE", 2)
    mapped: dict[int, int] = {}
    with monkeypatch.context() as crashing:
        real_map, real_put, puts = ports.archive.memory_id_map, ports.archive.put_memories, []

        def map_and_keep(source: str, workspace: str, ids: Any) -> dict[int, int]:
            found = real_map(source, workspace, ids)
            mapped.update(found)
            return dict(found)

        def put_then_crash(workspace: str, memories: Any) -> int:
            puts.append(len(memories))
            if len(puts) == 2:  # the second page: its ids are mapped and stored, the page is not written
                raise Crash
            return int(real_put(workspace, memories))
        crashing.setattr(ports.archive, "memory_id_map", map_and_keep)
        crashing.setattr(ports.archive, "put_memories", put_then_crash)
        # When the import dies there
        with pytest.raises(Crash):
            import_archive(ports, archive, W2)
    assert len(mapped) >= 4
    # Then a re-run writes the rest under the ids the map holds, each memory once, everything verified
    ports = engines.use_engine(monkeypatch, engine, tmp_path / "engine")
    report = import_archive(ports, archive, W2).as_dict()
    memories = report["sections"]["memories"]
    assert (memories["present"], memories["written"]) == (2, memories["archive"] - 2), report
    assert report["idsRemapped"] and all(s["verified"] for n, s in report["sections"].items() if n != "keys")
    original, copied = sections(archive), sections(export(ports, W2, tmp_path / "copy.jsonl"))
    check_copy(original, copied)
    final = {o["memory_id"]: c["memory_id"] for o, c in zip(original["memories"], copied["memories"], strict=True)}
    assert {old: final[old] for old in mapped if old in final} == {old: mapped[old] for old in mapped if old in final}
    assert len(set(mapped) & set(final)) >= 4  # the crashed page's memories among them
    assert not import_archive(ports, archive, W2).changed
