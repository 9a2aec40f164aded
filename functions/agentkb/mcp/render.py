"""Short text renderings of API results for the agent reading a tool result (the JSON rides along as structured
content): numbered hits with names, sources and scores, snapshot items with their classes, recall matches."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SNIPPET_CHARS = 240


def _snippet(text: Any, limit: int = SNIPPET_CHARS) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def _score(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, int | float) else "-"


def knowledge(body: dict[str, Any]) -> str:
    data = body.get("data") or {}
    results = data.get("results") or []
    lines = [f"{len(results)} of {data.get('totalResults', len(results))} results for {data.get('query')!r} "
             f"(reranker: {data.get('rerankerStatus')})"]
    for hit in results:
        source = hit.get("sourceUrl") or f"kb {hit.get('knowledgeBaseId')} / document {hit.get('documentId')}"
        lines.append(f"{hit.get('rank')}. {hit.get('documentName') or hit.get('documentId')} "
                     f"(chunk {hit.get('chunkIndex')}) - source: {source} - score {_score(hit.get('rankScore'))}, "
                     f"similarity {_score(hit.get('similarity'))}")
        lines.append(f"   {_snippet(hit.get('content'))}")
    return "\n".join(lines)


def graph(body: dict[str, Any]) -> str:
    entities = body.get("entities") or []
    lines = [f"{len(entities)} of {body.get('totalMatches', len(entities))} entities for {body.get('query')!r}"
             + (" (truncated)" if body.get("truncated") else "")]
    for number, entity in enumerate(entities, 1):
        project = f", project {entity['projectId']}" if entity.get("projectId") else ""
        lines.append(f"{number}. {entity.get('label')} [{entity.get('kind')}{project}] id {entity.get('id')}")
    labels = {e.get("id"): e.get("label") for e in [*entities, *(body.get("relatedEntities") or [])]}
    relations = body.get("relations") or []
    if relations:
        lines.append(f"Relations ({len(relations)}):")
        lines += [f"- {labels.get(r.get('from'), r.get('from'))} --{r.get('kind')}--> "
                  f"{labels.get(r.get('to'), r.get('to'))} ({r.get('trust')})" for r in relations]
    return "\n".join(lines)


def _recall_item(number: int, item: dict[str, Any]) -> str:
    depth = f", graph depth {item['graph_depth']}" if item.get("graph_depth") is not None else ""
    head = f"{number}. {item.get('name')} [{item.get('type')}] score {_score(item.get('score'))}"
    text = " - ".join(part for part in (_snippet(item.get("description")), _snippet(item.get("snippet"))) if part)
    return f"{head} ({item.get('source')}{depth})\n   {text}"


def recall(body: dict[str, Any]) -> str:
    direct, linked = body.get("direct_matches") or [], body.get("graph_matches") or []
    lines = [f"{len(direct)} direct and {len(linked)} graph matches for {body.get('query')!r}"
             + (" (truncated to the token budget)" if body.get("truncated") else "")]
    if body.get("vec_degraded"):
        lines.append(f"Vector leg degraded ({body.get('vec_degraded_code')}): lexical matches only.")
    lines += [_recall_item(n, item) for n, item in enumerate(direct, 1)]
    if linked:
        lines.append("Graph matches:")
        lines += [_recall_item(n, item) for n, item in enumerate(linked, 1)]
    return "\n".join(lines)


def snapshot(body: dict[str, Any]) -> str:
    items, budget = body.get("items") or [], body.get("budget") or {}
    lines = [f"Snapshot {body.get('snapshotId')}: {len(items)} items, {budget.get('usedTokens')} of "
             f"{budget.get('maxTokens')} tokens (hash {str(body.get('hash', ''))[:16]}...)"]
    for item in items:
        compressed = ", compressed" if item.get("compressed") else ""
        lines.append(f"{item.get('rank')}. [{item.get('class')}] {item.get('sourceId')} - {item.get('tokens')} tokens, "
                     f"{item.get('trustTier')}, {item.get('classification')}{compressed}")
        lines.append(f"   {_snippet(item.get('content'))}")
    exclusions = body.get("exclusions") or []
    if exclusions:
        lines.append("Excluded: " + ", ".join(f"{e.get('sourceId')} ({e.get('reason')})" for e in exclusions))
    return "\n".join(lines)


def memory(body: dict[str, Any]) -> str:
    replaced = f", supersedes memory {body['supersedes']}" if body.get("supersedes") else ""
    return (f"Stored memory {body.get('memory_id')} {body.get('name')!r} revision {body.get('revision')} "
            f"({body.get('type')}, {body.get('visibility')} in {body.get('workspace_id')}{replaced}); "
            f"{len(body.get('entity_ids') or [])} entities, {body.get('relation_count')} relations")


def knowledge_bases(body: dict[str, Any]) -> str:
    kbs = body.get("data") or []
    lines = [f"{len(kbs)} knowledge bases" + (" (more: pass cursor=nextCursor)" if body.get("nextCursor") else "")]
    for number, kb in enumerate(kbs, 1):
        tags = ", ".join(f"{t.get('tagName')}:{t.get('fieldType')}" for t in kb.get("tagDefinitions") or [])
        lines.append(f"{number}. {kb.get('name')} - id {kb.get('id')} ({kb.get('embeddingModel')})"
                     + (f" tags: {tags}" if tags else ""))
    return "\n".join(lines)


def error(status: int, body: Any, headers: dict[str, str]) -> str:
    """`CODE (status): message`, the first issue paths, and when to retry."""
    envelope = body.get("error") if isinstance(body, dict) else None
    if not isinstance(envelope, dict):
        return f"HTTP {status}: {_snippet(json.dumps(body), 400)}"
    text = f"{envelope.get('code')} ({status}): {envelope.get('message')}"
    details = envelope.get("details")
    if isinstance(details, list):
        issues = [f"{d.get('path')}: {d.get('message')}" for d in details[:5] if isinstance(d, dict)]
        text += "".join(f"\n- {issue}" for issue in issues)
    elif isinstance(details, dict) and details:
        text += f" {json.dumps(details, sort_keys=True)}"
    if "retry-after" in headers:
        text += f"\nRetry after {headers['retry-after']} s."
    return text


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "search_knowledge": knowledge, "search_graph": graph, "recall": recall, "create_snapshot": snapshot,
    "write_memory": memory, "list_knowledge_bases": knowledge_bases,
}
