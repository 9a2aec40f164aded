"""Issue 25: export reads the graph a page at a time (GraphStore.export_ids / export_relations), on both engines:
pages of 3 write the same graph sections, in the same order, as one page holding everything; each page continues
after the last id of the one before (AWS: ExclusiveStartKey on the graph partition)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.local.events import rest_event
from agentkb.services.portability import export
from testkit.corpus import replay
from tests.helpers import mint

GRAPH = json.loads((Path(__file__).resolve().parents[2] / "functions/agentkb/local/demo/graph.json").read_text())
SECTIONS = ("graph_entities", "graph_relations", "graph_proofs")


def _graph_sections(ports: Any) -> list[tuple[str, Any]]:
    records = export.workspace_records(ports.bundle, export.ExportRequest("demo"))
    return [(section, record) for section, record in records if section in SECTIONS]


def test_the_graph_is_exported_in_pages_with_the_same_records(ports: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    key = mint(ports.bundle, ["demo"], ["api:read", "api:write"], "grapher")
    assert replay(rest_event("POST", "/v1/graph", GRAPH, key=key))["statusCode"] == 200
    monkeypatch.setattr(export, "PAGE", 10_000)
    whole = _graph_sections(ports)
    monkeypatch.setattr(export, "PAGE", 3)
    paged = _graph_sections(ports)
    assert paged == whole
    counts = {s: sum(1 for section, _ in paged if section == s) for s in SECTIONS}
    assert counts == {"graph_entities": len(GRAPH["entities"]), "graph_relations": len(GRAPH["relations"]),
                      "graph_proofs": len(GRAPH["proofs"])}
    ids = [record["id"] for section, record in paged if section == "graph_entities"]
    assert ids == sorted(ids)


def test_a_page_starts_after_the_id_it_is_given(ports: Any) -> None:
    key = mint(ports.bundle, ["demo"], ["api:read", "api:write"], "grapher")
    assert replay(rest_event("POST", "/v1/graph", GRAPH, key=key))["statusCode"] == 200
    every = ports.graph.export_ids("demo", "entities", "", 100)
    assert len(every) == len(GRAPH["entities"]) and every == sorted(every)
    assert ports.graph.export_ids("demo", "entities", every[3], 2) == every[4:6]
    assert ports.graph.export_ids("demo", "proofs", "", 100) == sorted(p["id"] for p in GRAPH["proofs"])
    relations = ports.graph.export_relations("demo", "", 100)
    assert [r.id for r in ports.graph.export_relations("demo", relations[0].id, 3)] == [r.id for r in relations[1:4]]
    assert ports.graph.export_ids("other", "entities", "", 100) == []


def test_import_upserts_the_graph_a_page_at_a_time_with_the_same_records(ports: Any, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.services.portability import importer, sinks

    key = mint(ports.bundle, ["demo"], ["api:read", "api:write"], "grapher")
    assert replay(rest_event("POST", "/v1/graph", GRAPH, key=key))["statusCode"] == 200
    archive = tmp_path / "graph.jsonl"
    with archive.open("w", encoding="utf-8") as out:
        export.export_workspace(ports.bundle, export.ExportRequest("demo"), out, "test", sections=SECTIONS)
    pages: list[int] = []
    upsert = ports.bundle.graph.upsert
    monkeypatch.setattr(ports.bundle.graph, "upsert", lambda ws, batch: pages.append(
        len(batch.entities) + len(batch.relations) + len(batch.proofs)) or upsert(ws, batch))
    monkeypatch.setattr(sinks, "GRAPH_PAGE", 4)
    report = importer.import_archive(ports.bundle, archive, "copy")
    total = len(GRAPH["entities"]) + len(GRAPH["relations"]) + len(GRAPH["proofs"])
    assert max(pages) == 4 and sum(pages) == total  # never the whole graph held at once
    assert all(name in report.verified for name in SECTIONS)
    copied = export.workspace_records(ports.bundle, export.ExportRequest("copy"))
    assert [(s, r) for s, r in copied if s in SECTIONS] == _graph_sections(ports)
    again = importer.import_archive(ports.bundle, archive, "copy")
    assert not any(again.tally.written.get(name) for name in SECTIONS)  # idempotent, page by page too
