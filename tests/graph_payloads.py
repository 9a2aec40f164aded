"""Builders of graph write payloads shared by the graph suites (unit, contract, AWS): the demo graph and
synthetic entities, relations, proofs and batches."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from agentkb.models.graph.text import identity_fingerprint
from tests.upstream import assert_upstream, json_documents

ROOT = Path(__file__).resolve().parents[1]
DEMO = json.loads((ROOT / "functions/agentkb/local/demo/graph.json").read_text())
WS = "demo"


def demo() -> dict[str, Any]:
    return copy.deepcopy(DEMO)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def proof(pid: str, artifact: str = "src/app.py", observed: str = "2025-01-01T00:00:00Z") -> dict[str, Any]:
    return {"id": pid, "provider": "test", "artifact": artifact, "contentHash": sha(pid), "observedAt": observed,
            "derivation": "extracted", "trust": "authoritative", "confidence": "high", "freshness": "fresh"}


def entity(eid: str, label: str, kind: str = "service", *, key: str | None = None, aliases: list[str] | None = None,
           project: str | None = None, proofs: list[str] | None = None, attributes: dict[str, Any] | None = None,
           ) -> dict[str, Any]:
    e: dict[str, Any] = {"id": eid, "kind": kind, "label": label,
                         "identity": {"key": key or eid, "scope": "project" if project else "workspace",
                                      "aliases": aliases or [],
                                      "fingerprint": identity_fingerprint(kind, project, key or eid)},
                         "attributes": attributes or {}, "proofIds": proofs or []}
    if project:
        e["projectId"] = project
    return e


def relation(rid: str, a: str, b: str, proofs: list[str], *, kind: str = "depends-on", trust: str = "authoritative",
             confidence: str = "high") -> dict[str, Any]:
    return {"id": rid, "from": a, "to": b, "kind": kind, "derivation": "extracted", "trust": trust,
            "confidence": confidence, "proofIds": proofs}


def batch(entities: list[dict[str, Any]], relations: list[dict[str, Any]] | None = None,
          proofs: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {"workspaceId": WS, "entities": entities, "relations": relations or [], "proofs": proofs or [], **extra}


def upstream_document(name: str) -> dict[str, Any]:
    """An upstream document of contracts/ (vendored), by file name, as served (the README's deviations applied)."""
    return json_documents()[name]


def assert_upstream_search(body: dict[str, Any]) -> None:
    """A graph-search response that every upstream client accepts (tests/upstream.py: counted, every $ref
    resolved through the upstream documents)."""
    assert_upstream("workspace-knowledge-search.v1.schema.json", body)
