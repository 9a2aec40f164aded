"""The fuzz run's responses held to the upstream contracts (vendored in contracts/) with contracts/upstream.py.

schemathesis checks each response against our served /openapi.json; this reads its NDJSON report afterwards and
validates every recorded response of a route that implements an upstream contract (knowledge search, graph
search, recall, snapshots: their 2xx bodies and their error envelopes) with the validators the tests use.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from contracts.upstream import KNOWLEDGE_SEARCH, PENDING_UPSTREAM, VALIDATED, upstream_errors

# "METHOD path" of schemathesis' labels -> the schemas/ file its 2xx body implements (its errors: the envelope).
CONTRACT_ROUTES = {
    "POST /api/v2/knowledge/search": (KNOWLEDGE_SEARCH, 200),
    "POST /v1/graph/search": ("workspace-knowledge-search.v1.schema.json", None),
    "POST /v1/recall": ("recall-response.schema.json", None),
    "POST /v1/snapshots": ("context-snapshot.schema.json", None),
    "GET /v1/snapshots/{snapshotId}": ("context-snapshot.schema.json", None),
}


def _document(label: str, status: int) -> tuple[str, int | None] | None:
    route = CONTRACT_ROUTES.get(label)
    if route is None:
        return None
    if status >= 400:
        return KNOWLEDGE_SEARCH, status
    return None if route[0] in PENDING_UPSTREAM else route


def _body(response: dict[str, Any]) -> Any:
    raw = (response.get("content") or {}).get("$base64")
    return json.loads(base64.b64decode(raw)) if raw else None


def check_upstream(ndjson: Path) -> dict[str, Any]:
    """Validate every recorded response of a contract route; returns counts per document and failures."""
    before = Counter(VALIDATED)
    failures: set[str] = set()
    lines = ndjson.read_text().splitlines() if ndjson.exists() else []
    for line in lines:
        scenario = json.loads(line).get("ScenarioFinished")
        recorder = (scenario or {}).get("recorder") or {} if isinstance(scenario, dict) else {}
        label = re.sub(r"\s+", " ", str(recorder.get("label", "")))
        for interaction in (recorder.get("interactions") or {}).values():
            response = interaction.get("response") or {}
            found = _document(label, int(response.get("status_code") or 0))
            body = _body(response) if found else None
            if found is None or body is None:
                continue
            errors = upstream_errors(found[0], body, found[1])
            if errors:
                failures.add(f"{label} [{response.get('status_code')}]: fails upstream {found[0]}: {errors[:2]}")
    validated = Counter(VALIDATED)
    validated.subtract(before)
    return {"validated": {doc: n for doc, n in sorted(validated.items()) if n}, "failures": sorted(failures)}
