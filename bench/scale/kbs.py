"""The scale benchmark's two KBs: SciFact's (ingested once) and the N-chunk KB built from it (bench/scale/data.py)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

WORKSPACE = "bench"


def small_kb(args: argparse.Namespace, name: str) -> str:
    """SciFact's KB, ingested unless a previous run left it whole (re-ingesting 5k documents rewrites them all)."""
    from agentkb.composition import get_ports
    from agentkb.services.ingest.chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS
    from bench.beir import load_corpus
    from bench.quality import scifact

    c = get_ports()
    kb = c.catalog.find_knowledge_base_by_name(WORKSPACE, name)
    want = len(load_corpus(args.dataset)[:args.limit_docs])
    ready = "SELECT count(*) FROM documents WHERE knowledge_base_id = ? AND status = 'ready'"
    if kb is not None and c.index.db.connection().execute(ready, (kb.id,)).fetchone()[0] == want:
        return kb.id
    made = scifact.ingest(args.dataset, name, DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS, args.limit_docs)
    return str(made["kb_id"])


def big_kb(cache: Path, small: str, args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The N-chunk KB (built now, or the one a previous run built) and its build numbers."""
    from agentkb.composition import get_ports
    from agentkb.local.operator import create_kb
    from bench.scale.data import build, real_chunks

    c = get_ports()
    name = f"scale-{args.chunks}-{args.noise}-{args.seed}"
    stats_path = cache / f"{name}.json"
    kb = c.catalog.find_knowledge_base_by_name(WORKSPACE, name)
    if kb is not None and stats_path.exists():
        return kb.id, {**json.loads(stats_path.read_text()), "build_cached": True}
    if kb is not None:  # a build that did not finish: start again
        c.index.delete_knowledge_base(kb)
        c.catalog.delete_knowledge_base(kb)
    kb = create_kb(c, WORKSPACE, name, None, [])
    real = real_chunks(c.index.db.connection(), small)
    stats: dict[str, Any] = {"real_chunks": len(real.contents), **build(c.index, kb, real, args.chunks, args.noise,
                                                                      args.seed)}
    t0 = time.perf_counter()
    c.index.tables.get(c.index.db.connection(), kb.id)  # vectors read whole + the index built (and saved)
    stats["vector_index_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    c.index.lexical.refresh(kb.id)  # tantivy catches up with the new chunks and documents
    stats["lexical_index_s"] = round(time.perf_counter() - t0, 2)
    stats["build_s"] = round(stats["write_s"] + stats["vector_index_s"] + stats["lexical_index_s"], 2)
    stats_path.write_text(json.dumps({**stats, "kb_name": name}))
    return kb.id, stats
