"""Issue 25: a seeded embedded workspace exported, imported into a fresh embedded data dir, and compared section by
section; the same searches, recalls and snapshot GETs answer the same; a second import writes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.cli.main import main
from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.local.events import body_of, rest_event
from agentkb.services.portability.archive_file import ArchiveReader
from testkit.corpus import KB, WS, mint, replay, seed

RECALL = json.loads((Path(__file__).resolve().parents[2] / "events/recall/recall_ok.json").read_text())["body"]
RECALL = json.loads(RECALL) if isinstance(RECALL, str) else RECALL


def _use(monkeypatch: pytest.MonkeyPatch, data: Path) -> None:
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(data))
    reset_settings()
    reset_ports()


def _sections(path: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for section, record in ArchiveReader(path).records():
        out.setdefault(section, []).append(record)
    return out


def _answers(key: str, snapshot_id: str) -> list[Any]:
    """What a client sees: a search, a memory recall, a graph search and the snapshot's exact bytes."""
    calls = [("POST", "/api/v2/knowledge/search", {"workspaceId": WS, "knowledgeBaseIds": [KB],
                                                   "query": "reset password"}),
             ("POST", "/v1/recall", {**RECALL, "workspace_id": WS}),
             ("POST", "/v1/graph/search", {"workspaceId": WS, "query": "vpn"})]
    out: list[Any] = []
    for method, path, body in calls:
        answer = replay(rest_event(method, path, body, key=key))
        assert answer["statusCode"] == 200, (path, answer["body"])
        out.append(_timeless(body_of(answer)))
    assert out[0]["data"]["results"] and out[1]["results"] and out[2]["entities"], out  # answers worth comparing
    snapshot = replay(rest_event("GET", f"/v1/snapshots/{snapshot_id}", key=key))
    assert snapshot["statusCode"] == 200
    out.append(snapshot["body"])
    return out


def _timeless(value: Any) -> Any:
    """An answer without what differs between two calls (timings, request ids)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items()
                if k not in ("took_ms", "tookMs", "request_id", "requestId", "timings", "elapsed_ms")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def test_embedded_to_embedded_round_trip(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    seed(get_ports(), snapshot=True)
    written = replay(rest_event("POST", "/v1/memories", {
        "workspace_id": WS, "visibility": "workspace", "type": "note", "name": "support-group",
        "body": "Caroline went to the support group", "occurred_at": "2023-05-07"},
        key=mint(get_ports(), [WS], ["api:read", "api:write"], "writer")))
    assert written["statusCode"] == 201, written["body"]
    snapshot_id = _snapshot_id(get_ports())
    before = _answers(mint(get_ports(), [WS], ["api:read"], "checker"), snapshot_id)
    archive = tmp_path / "ws.agentkb.jsonl"
    assert main(["export", "--workspace", WS, "--out", str(archive)]) == 0
    exported = _sections(archive)
    assert {s for s, rows in exported.items() if rows} >= {
        "knowledge_bases", "documents", "chunks", "memories", "graph_entities", "snapshots", "traces", "keys"}
    assert all("key_hash" not in k and "hash" not in json.dumps(k) for k in exported["keys"])
    assert [m["occurred_at"] for m in exported["memories"] if m["name"] == "support-group"] == [
        "2023-05-07T00:00:00.000Z"]  # when it happened travels with the memory

    _use(monkeypatch, tmp_path / "target")
    capsys.readouterr()
    assert main(["import", str(archive), "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["changed"] and report["targetWasEmpty"]
    assert all(s["verified"] for name, s in report["sections"].items() if name != "keys"), report
    again = tmp_path / "again.jsonl"
    assert main(["export", "--workspace", WS, "--out", str(again)]) == 0
    assert {k: v for k, v in _sections(again).items() if k != "keys"} == {
        k: v for k, v in exported.items() if k != "keys"}
    assert _answers(mint(get_ports(), [WS], ["api:read"], "checker"), snapshot_id) == before

    assert main(["import", str(archive), "--json", "--quiet"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert not second["changed"]
    assert all(s["written"] == 0 for s in second["sections"].values())


def _snapshot_id(ports: Any) -> str:
    ids = list(ports.archive.snapshot_ids(WS))
    assert len(ids) == 1
    return str(ids[0])
