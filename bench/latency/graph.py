"""Graph search latency at scale: 100k entities / 500k relations with hubs, ~200 queries, one JSON line.

    .venv/bin/python -m bench.latency.graph [--entities 100000] [--relations 500000] [--queries 200]

Builds the graph in a temp data dir through the store's batch upsert, then times `search_graph` (full and agent
projections) and, when the search function's handler exists, the same requests through its `lambda_handler`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from agentkb.adapters.embedded.sqlite.db import Database  # noqa: E402
from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore  # noqa: E402
from agentkb.models.graph.api import ENTITY_KINDS, RELATION_KINDS, GraphSearchRequest
from agentkb.models.graph.records import EntityRecord, GraphBatch, ProofRecord, RelationRecord
from agentkb.models.graph.text import identity_fingerprint
from agentkb.services.graph.search import search_graph  # noqa: E402

WORKSPACE = "bench"
TRUST = ("authoritative", "corroborated", "observed", "ambiguous")
CONFIDENCE = ("high", "medium", "low")


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = {"".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(size * 2)}
    return sorted(words)[:size]


_CUMULATIVE: list[float] = []


def zipf_word(rng: random.Random, words: list[str]) -> str:
    """Rank-frequency 1/r (Zipf, s=1): the top word is in roughly a third of all entities, like `py` or `api`."""
    if len(_CUMULATIVE) != len(words):
        _CUMULATIVE[:] = [0.0] * len(words)
        total = 0.0
        for rank in range(len(words)):
            total += 1.0 / (rank + 1)
            _CUMULATIVE[rank] = total
    return rng.choices(words, cum_weights=_CUMULATIVE)[0]


def build(store: SqliteGraphStore, n_entities: int, n_relations: int, hubs: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    words = vocabulary(rng)
    rng.shuffle(words)
    proofs = [ProofRecord(id=f"p{i}", provider="bench", artifact=f"src/mod{i % 997}/file{i}.py",
                          observed_at="2025-01-01T00:00:00Z", derivation="extracted", trust="authoritative",
                          confidence="high", freshness="fresh",
                          content_hash=hashlib.sha256(str(i).encode()).hexdigest(), line=1 + i % 400)
              for i in range(n_entities // 5)]
    entities = []
    for i in range(n_entities):
        kind = ENTITY_KINDS[i % len(ENTITY_KINDS)]
        project = None if i % 5 == 0 else f"proj{i % 10}"
        label = f"{zipf_word(rng, words)}-{zipf_word(rng, words)}-{i}"
        key = f"{kind}/{label}"
        entities.append(EntityRecord(
            id=f"e{i}", kind=kind, label=label, project_id=project, identity_key=key,
            identity_scope="project" if project else "workspace",
            aliases=tuple(f"{zipf_word(rng, words)} {i}" for _ in range(i % 3)),
            fingerprint=identity_fingerprint(kind, project, key),
            attributes={"description": " ".join(zipf_word(rng, words) for _ in range(4)), "rank": i % 7},
            proof_ids=(f"p{rng.randrange(len(proofs))}",)))
    relations = []
    hub_ids = [f"e{i * (n_entities // max(hubs, 1))}" for i in range(hubs)]
    for i in range(n_relations):
        if i % 5 == 0:  # a fifth of all relations land on a few hubs
            a, b = hub_ids[(i // 5) % hubs], f"e{rng.randrange(n_entities)}"
        else:
            a, b = f"e{rng.randrange(n_entities)}", f"e{rng.randrange(n_entities)}"
        if i % 2:
            a, b = b, a
        relations.append(RelationRecord(
            id=f"r{i}", from_id=a, to_id=b, kind=RELATION_KINDS[i % len(RELATION_KINDS)], derivation="extracted",
            trust=TRUST[rng.randrange(4)], confidence=CONFIDENCE[rng.randrange(3)],
            proof_ids=tuple(f"p{rng.randrange(len(proofs))}" for _ in range(1 + i % 6))))
    started = time.perf_counter()
    step = 50_000
    store.upsert(WORKSPACE, GraphBatch(entities=tuple(entities), proofs=tuple(proofs)))
    for start in range(0, len(relations), step):
        store.upsert(WORKSPACE, GraphBatch(relations=tuple(relations[start:start + step])))
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    store.source_hash(WORKSPACE)
    return {"load_s": round(load_s, 2), "first_hash_s": round(time.perf_counter() - started, 2),
            "entities": entities, "words": words, "hubs": hub_ids}


def requests(built: dict[str, object], n: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed + 1)
    entities: list[EntityRecord] = built["entities"]  # type: ignore[assignment]
    words: list[str] = built["words"]  # type: ignore[assignment]
    hubs: list[str] = built["hubs"]  # type: ignore[assignment]
    out: list[dict[str, object]] = []
    for i in range(n):
        shape = i % 6
        if shape == 0:
            query = rng.choice(entities).label  # exact label
        elif shape == 1:
            query = entities[int(rng.choice(hubs)[1:])].label  # a hub: thousands of relations
        elif shape == 2:
            query = rng.choice(words[:50])  # a common term
        elif shape == 3:
            query = f"{rng.choice(words[:200])} {rng.choice(words)}"  # two terms
        elif shape == 4:
            query = rng.choice(words)[:3]  # a short prefix
        else:
            query = rng.choice(words)  # any term
        body: dict[str, object] = {"workspaceId": WORKSPACE, "query": query,
                                   "projection": "agent" if i % 2 else "full"}
        if i % 7 == 0:
            body["projectId"] = f"proj{i % 10}"
        if i % 11 == 0:
            body["kind"] = ENTITY_KINDS[i % len(ENTITY_KINDS)]
        out.append(body)
    return out


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
            "max_ms": round(ordered[-1] * 1000, 2)}


def time_service(store: SqliteGraphStore, bodies: list[dict[str, object]]) -> tuple[dict[str, float], int]:
    samples, biggest = [], 0
    for body in bodies:
        started = time.perf_counter()
        payload = json.dumps(search_graph(store, GraphSearchRequest.model_validate(body)), separators=(",", ":"))
        samples.append(time.perf_counter() - started)
        biggest = max(biggest, len(payload))
    return percentiles(samples), biggest


def time_handler(data_dir: Path, bodies: list[dict[str, object]]) -> dict[str, float] | None:
    """Through the search function's lambda_handler as a direct invocation, once the route is wired."""
    try:
        import os

        os.environ["AGENTKB_DATA_DIR"] = str(data_dir)
        from search.handler import lambda_handler  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001  (the route may not be wired yet: report null)
        return None
    from types import SimpleNamespace

    context = SimpleNamespace(function_name="search", memory_limit_in_mb=1024, aws_request_id="bench",
                              invoked_function_arn="arn:aws:lambda:us-east-1:000000000000:function:search")
    samples = []
    principal = {"id": "bench", "workspaces": [WORKSPACE], "scopes": ["api:read"]}
    for body in bodies:
        event = {"operation": "searchGraph", "principal": principal, "body": body}
        started = time.perf_counter()
        result = lambda_handler(event, context)
        samples.append(time.perf_counter() - started)
        if result.get("statusCode") != 200:
            return {"error_status": float(result.get("statusCode", 0)), "body": str(result.get("body"))[:300]}
    return percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--relations", type=int, default=500_000)
    parser.add_argument("--hubs", type=int, default=20)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentkb-bench-graph-") as tmp:
        data_dir = Path(tmp)
        store = SqliteGraphStore(Database(data_dir / "agentkb.sqlite3"))
        built = build(store, args.entities, args.relations, args.hubs, args.seed)
        bodies = requests(built, args.queries, args.seed)
        time_service(store, bodies[:20])  # warm the page cache and statement cache
        service, biggest = time_service(store, bodies)
        agent, _ = time_service(store, [b for b in bodies if b["projection"] == "agent"])
        handler = time_handler(data_dir, bodies)
        print(json.dumps({"bench": "graph_search", "entities": args.entities, "relations": args.relations,
                          "hubs": args.hubs, "queries": len(bodies), "load_s": built["load_s"],
                          "first_hash_s": built["first_hash_s"], "service": service, "agent_only": agent,
                          "handler": handler, "max_response_bytes": biggest, "target_p50_ms": 25,
                          "target_met": service["p50_ms"] <= 25}))


if __name__ == "__main__":
    main()
