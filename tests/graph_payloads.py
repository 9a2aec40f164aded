"""Builders of graph write payloads shared by the graph suites (unit, contract, AWS): the demo graph and
synthetic entities, relations, proofs and batches."""

from __future__ import annotations

import copy
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

from agentkb.models.graph import identity_fingerprint

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


# The upstream documents real clients validate with: ../shared/contracts beside the repository (or beside the
# folder holding a worktree of it).
UPSTREAM = next((p / "shared" / "contracts" for p in ROOT.parents if (p / "shared" / "contracts").is_dir()),
                ROOT.parent / "shared" / "contracts")
SEARCH_CONTRACT = "workspace-knowledge-search.v1.schema.json"
UPSTREAM_DOCUMENTS = (SEARCH_CONTRACT, "workspace-knowledge-graph.v1.json", "workspace-dependency-graph.v1.json")


@cache
def upstream_search_validator() -> Draft202012Validator:
    """workspace-knowledge-search.v1 with every $ref resolved through the upstream documents (a `referencing`
    registry holding all three), with format checks. Falls back to our verbatim copies in schemas/ when the shared
    contracts are not beside the repository."""
    documents = [upstream_document(name) for name in UPSTREAM_DOCUMENTS]
    registry = Registry().with_resources((doc["$id"], Resource.from_contents(doc)) for doc in documents)
    return Draft202012Validator(documents[0], registry=registry, format_checker=FormatChecker())


def upstream_document(name: str) -> dict[str, Any]:
    path = UPSTREAM / name
    if not path.exists():
        path = ROOT / "schemas" / (name if name.endswith(".schema.json") else name.replace(".json", ".schema.json"))
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def assert_upstream_search(body: dict[str, Any]) -> None:
    """A graph-search response that every upstream client accepts."""
    errors = sorted(upstream_search_validator().iter_errors(body), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:3]]
