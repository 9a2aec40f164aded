"""An OB1 client over the real ingest lambda_handler, and the payloads OB1's smoke harness and plugins send.

Used by the embedded (tests/handlers) and AWS (tests/handlers/aws) suites alike: the same flows on both engines.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from tests.helpers import SCHEMAS, body_of, invoke, response_headers, rest_event

# Every 200 of these routes is checked against its schema (no other members, required members, enums).
RESPONSE_SCHEMAS = {path: Draft202012Validator(json.loads((SCHEMAS / name).read_text()), format_checker=FormatChecker())
                    for path, name in (("/recall", "ob1-recall-response.v1.schema.json"),
                                       ("/writeback", "ob1-writeback-response.v1.schema.json"))}


@dataclass
class Ob1Client:
    """Calls `/ob1<path>` with OB1's key header (`x-brain-key`) unless told otherwise."""

    key: str
    carrier: str = "x-brain-key"  # or "query" or "x-api-key"

    def call(self, method: str, path: str, body: Any = None,
             query: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
        headers: dict[str, str] = {}
        query = dict(query or {})
        if self.carrier == "query":
            query["key"] = self.key
        else:
            headers[self.carrier] = self.key
        base, _, raw = path.partition("?")
        if raw:
            query.update(dict(part.split("=", 1) for part in raw.split("&")))
        response = invoke("ingest", rest_event(method, f"/ob1{base}", body, headers=headers, query=query or None))
        answer = body_of(response)
        if response["statusCode"] == 200 and base in RESPONSE_SCHEMAS:
            RESPONSE_SCHEMAS[base].validate(answer)
        return response["statusCode"], answer, response_headers(response)

    def ok(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        code, answer, _ = self.call(method, path, body)
        assert code == status, (code, answer)
        return answer


def writeback_payload(ws: str, run: str, project: str | None = "smoke-project", **over: Any) -> dict[str, Any]:
    """OB1's live smoke write-back (same shape and defaults), for workspace `ws` and run `run`."""
    payload: dict[str, Any] = {
        "schema_version": "openbrain.openclaw.writeback.v1", "workspace_id": ws, "project_id": project,
        "task_id": f"smoke-{run}", "step_id": "writeback-1", "idempotency_key": f"smoke-{run}:writeback-1",
        "channel": {"kind": "cli", "id": "api-smoke", "thread_id": run},
        "runtime": {"name": "smoke-harness", "version": "0.1.0"},
        "models_used": [{"provider": "harness", "model": "direct-api", "role": "smoke"}],
        "source_refs": [{"kind": "repo", "uri": "repo://smoke/live-smoke.mjs", "title": "smoke harness"}],
        "memory_payload": {
            "decisions": [], "outputs": [f"Agent memory smoke {run} wrote governed memory through the endpoint."],
            "lessons": [f"Smoke {run} verifies generated memory stays evidence-only until review."],
            "constraints": ["Smoke harnesses must never print access keys."], "unresolved_questions": [],
            "next_steps": ["Keep the smoke harness in the release checklist."], "failures": [],
            "artifacts": [{"kind": "script", "uri": "repo://smoke/live-smoke.mjs", "description": "smoke harness"}],
            "entities": {"topics": ["agent memory", "smoke test"], "repos": ["OB1"]}},
        "provenance": {"default_status": "generated", "confidence": 0.83, "requires_review": True},
        "retention": {"stale_after_days": 30},
        "visibility": {"workspace": "private", "project": "project", "channel": "cli"},
    }
    payload.update(over)
    return copy.deepcopy(payload)


def recall_payload(ws: str, run: str, include_unconfirmed: bool, project: str | None = "smoke-project",
                   **over: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "schema_version": "openbrain.openclaw.recall.v1", "workspace_id": ws, "project_id": project,
        "task_id": f"smoke-{run}", "task_type": "smoke", "channel": {"kind": "cli", "id": "api-smoke"},
        "runtime": {"name": "smoke-harness", "version": "0.1.0"},
        "model_intent": {"provider": "harness", "model": "direct-api"},
        "query": f"agent memory smoke {run} governed memory evidence-only review",
        "entities": {"topics": ["agent memory"], "repos": ["OB1"]},
        "scope": {"visibility": "project", "project_only": True, "include_unconfirmed": include_unconfirmed,
                  "include_stale": False},
        "limits": {"max_items": 10, "max_tokens": 4000, "recency_days": 7},
        "sensitivity": {"contains_code": False, "contains_customer_data": False,
                        "contains_private_meeting_data": False},
    }
    payload.update(over)
    return payload


def hermes_recall(ws: str, query: str) -> dict[str, Any]:
    """What the Hermes plugin sends: the runtime-neutral family, runtime hermes, no entities or sensitivity."""
    return {"schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": ws, "query": query,
            "scope": {"visibility": "personal", "project_only": True, "include_unconfirmed": True,
                      "include_stale": False}, "limits": {"max_items": 10, "max_tokens": 4000},
            "task_type": "conversation", "runtime": {"name": "hermes"}}


def hermes_writeback(ws: str, lesson: str) -> dict[str, Any]:
    """The Hermes plugin's write-back: no idempotency key, content hash, provenance or visibility."""
    return {"schema_version": "openbrain.agent_memory.writeback.v1", "workspace_id": ws,
            "runtime": {"name": "hermes"}, "memory_payload": {"lessons": [lesson]}}
