"""schemathesis hooks (SCHEMATHESIS_HOOKS=bench.fuzz.hooks): generated cases aimed at the seeded workspace.

A generator left alone invents workspace and knowledge-base ids, and nearly every request stops at the scope
check. Here every workspace field becomes the key's workspace, every id (path parameter or body field) one that
was seeded (`FUZZ_SEEDS`, written by run.py), most list cursors issued ones, and most free-text queries
realistic ones; the rest of each case (types, lengths, nesting, optional fields, and in negative mode the broken
parts) stays as generated. The mapping goes by parameter and field name, so routes added later are aimed the same
way.
"""

from __future__ import annotations

import json
import os
import random
import uuid
from pathlib import Path
from typing import Any

import schemathesis

SEEDS: dict[str, Any] = json.loads(Path(os.environ["FUZZ_SEEDS"]).read_text()) if "FUZZ_SEEDS" in os.environ else {}
_rng = random.Random(int(os.environ.get("FUZZ_SEED", "0")))
WORKSPACE_FIELDS = {"workspaceId", "workspace_id"}
QUERIES = ("How do I reset my password?", "failed payments retried", "billing deploy runbook", "refund policy",
           "incident escalation", "vpn rollout", "who owns the billing api")
# Generated run ids repeat (boundary values), and the same ids with another body is a 409 by contract: most
# requests get fresh ones so that builds and writes happen; the rest keep exercising replays and conflicts.
FRESH_IDS = {"runId", "attemptId", "idempotency_key"}
MISS_RATE = 0.05  # some ids stay as generated: a missing resource must be a clean 404 too


def _pick(name: str) -> Any:
    values = SEEDS.get(name) or []
    return _rng.choice(values) if values else None


def aim_path(path: str, path_parameters: dict[str, Any]) -> dict[str, Any]:
    if _rng.random() < MISS_RATE:
        return path_parameters
    aimed = dict(path_parameters)
    pair = _pick("documents")  # [kb, document]: a document id only exists under its own knowledge base
    for name in path_parameters:
        lowered, value = name.lower(), None
        if lowered == "knowledgebaseid":
            value = pair[0] if pair and "documentId" in aimed else _pick("knowledgeBases")
        elif lowered == "documentid":
            value = pair[1] if pair else None
        elif lowered.startswith("snapshot"):
            value = _pick("snapshots")
        elif lowered.startswith("memory") or (lowered == "id" and "/memories/" in path):
            value = _pick("memories")
        if value is not None:
            aimed[name] = value
    return aimed


def aim_query(path: str, name: str, value: Any) -> Any:
    """The key's workspace; an issued cursor of the same list (most of the time: a made-up one is a clean 400)."""
    if name in WORKSPACE_FIELDS:
        return SEEDS["workspace"]
    issued = (SEEDS.get("cursors") or {}).get(path)
    if name == "cursor" and issued and _rng.random() >= MISS_RATE:
        return issued
    return value


def aim(value: Any) -> Any:
    """Workspace fields -> the key's workspace, knowledge-base ids -> seeded ones, queries -> realistic text."""
    if isinstance(value, list):
        return [aim(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in WORKSPACE_FIELDS and isinstance(item, str | type(None)):
            out[key] = SEEDS.get("workspace", item)
        elif key == "knowledgeBaseIds" and isinstance(item, list) and item and SEEDS.get("knowledgeBases"):
            out[key] = _rng.sample(SEEDS["knowledgeBases"], k=min(len(item), len(SEEDS["knowledgeBases"])))
        elif key == "knowledgeBaseId" and isinstance(item, str):
            out[key] = _pick("knowledgeBases") or item
        elif key == "query" and isinstance(item, str) and _rng.random() < 0.7:
            out[key] = _rng.choice(QUERIES)
        elif key in FRESH_IDS and isinstance(item, str) and _rng.random() < 0.8:
            out[key] = str(uuid.UUID(int=_rng.getrandbits(128), version=4))  # a new run, not a replayed one
        else:
            out[key] = aim(item)
    return out


@schemathesis.hook
def map_case(ctx: Any, case: Any) -> Any:
    if not SEEDS:
        return case
    if case.path_parameters:
        case.path_parameters = aim_path(case.path, case.path_parameters)
    if isinstance(case.query, dict):
        case.query = {k: aim_query(case.path, k, v) for k, v in case.query.items()}
    if isinstance(case.body, dict | list):
        case.body = aim(case.body)
    return case
