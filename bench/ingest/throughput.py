"""Ingest throughput on a real folder vs. the model's own throughput on the same chunks, in one run (issue 16).

Copies up to --max-bytes of the documentation a Linux system ships (/usr/share/doc: .md .txt .html) into a temp
folder, then, in one process with the model warm:
  1. model:  the chunks `agentkb ingest` would make, embedded with the same batches and nothing else;
  2. ingest: `agentkb ingest` of the folder into a fresh data directory (discovery, extraction, chunking,
     embedding cache, SQLite writes, FTS), timed end to end;
  3. model again (the machine may be shared: the two model runs bracket the ingest).
Target: ingest chunks/s within 15% of the model's (ratio >= 0.85).

    .venv/bin/python -m bench.ingest.throughput [--max-bytes 300000] [--source /usr/share/doc]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

SUFFIXES = (".md", ".txt", ".html")


def sample(source: Path, target: Path, max_bytes: int) -> int:
    """Copy files (sorted, deterministic) until max_bytes; returns how many."""
    total = count = 0
    for path in sorted(source.rglob("*")):
        if path.suffix in SUFFIXES and path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            if size == 0 or size > max_bytes // 4:
                continue
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            total, count = total + size, count + 1
            if total >= max_bytes:
                break
    return count


def model_run(embedder: Any, texts: list[str], batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        embedder.embed_documents(texts[i:i + batch])
    return time.perf_counter() - start


def run(source: Path, max_bytes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentkb-throughput-") as tmp:
        folder, data = Path(tmp) / "docs", Path(tmp) / "data"
        files = sample(source, folder, max_bytes)
        os.environ.update({"AGENTKB_DATA_DIR": str(data), "POWERTOOLS_METRICS_DISABLED": "true",
                           "POWERTOOLS_TRACE_DISABLED": "true"})
        from agentkb.composition import get_ports
        from agentkb.local.ingest_files import discover, read_sources
        from agentkb.local.operator import create_kb, ingest_paths
        from agentkb.services.ingest.bulk import EMBED_BATCH
        from agentkb.services.ingest.chunking import chunk_text

        ports = get_ports()
        kb = create_kb(ports, "bench", "docs", None, [])
        found = discover([folder])
        sources = read_sources(kb, found.files, [], [])
        texts = list({p.content_hash: p.content for s in sources
                      for p in chunk_text(s.extracted.text, ports.tokenizer)}.values())
        ports.embedder.embed_documents(texts[:EMBED_BATCH])  # load and warm the model
        first = model_run(ports.embedder, texts, EMBED_BATCH)
        start = time.perf_counter()
        summary = ingest_paths(ports, "bench", kb.id, [folder], progress=False)
        ingest_s = time.perf_counter() - start
        second = model_run(ports.embedder, texts, EMBED_BATCH)
        model_s = (first + second) / 2
        return {"files": files, "bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
                "documents": summary["created"], "skipped": len(summary["skipped"]), "chunks": len(texts),
                "modelSeconds": [round(first, 2), round(second, 2)], "ingestSeconds": round(ingest_s, 2),
                "modelChunksPerSecond": round(len(texts) / model_s, 1),
                "ingestChunksPerSecond": round(len(texts) / ingest_s, 1),
                "ratio": round(model_s / ingest_s, 3)}  # the same unique chunks embedded: time against time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, default=Path("/usr/share/doc"))
    parser.add_argument("--max-bytes", type=int, default=300_000)
    args = parser.parse_args()
    print(json.dumps(run(args.source, args.max_bytes), indent=2))


if __name__ == "__main__":
    main()
