"""The bulk path of `agentkb import` (issue 26 item 3): how many chunks/s does an archive with vectors load, with
nothing embedded, into an empty embedded data dir?

The archive is synthetic and written straight through the archive writer (no source data dir): N chunks in
documents of CHUNKS_PER_DOCUMENT, each chunk a distinct sentence of a few hundred characters drawn from a small
vocabulary and a dense random unit 384-d vector (MiniLM's dimension, so the bytes per vector of a real archive).
The import runs in its own process (its peak RSS is its own) and reports the importer's phases: the verifying
read of the file, the writes, the read-back verification, and then the first BM25 and kNN searches (where the
tantivy indexes and the vector table catch up from the change logs).

    .venv/bin/python -m bench.portability.bulk --chunks 100000 [--workdir DIR] [--keep] [--import-only]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

WORKSPACE, KB_ID, DIMENSION, CHUNKS_PER_DOCUMENT = "bulk", "kb-bulk", 384, 4
MODEL = "hashed-384"
CREATED = "2026-01-01T00:00:00Z"
WORDS = ["protein", "cell", "gene", "expression", "patient", "cohort", "trial", "dose", "receptor", "pathway",
         "tumour", "signal", "binding", "mutation", "sample", "variant", "immune", "response", "clinical", "outcome"]


def build(path: Path, chunks: int, seed: int = 7) -> None:
    """Write an archive of `chunks` chunks (and their documents, one KB) to `path`."""
    from agentkb.services.portability.archive_file import ArchiveWriter
    from agentkb.services.portability.records import pack_vector

    rng = np.random.default_rng(seed)
    with path.open("w", encoding="utf-8") as out:
        writer = ArchiveWriter(out, {"engine": "embedded", "knowledge_bases": [], "workspace": WORKSPACE,
                                     "embedder": {"model": MODEL, "dimension": DIMENSION}})
        writer.write("knowledge_bases", {"id": KB_ID, "name": "bulk", "description": None,
                                         "profile": {"model": MODEL, "dimension": DIMENSION},
                                         "tag_definitions": [], "created_at": CREATED, "secret_policy": "flag"})
        documents = -(-chunks // CHUNKS_PER_DOCUMENT)
        for d in range(documents):
            count = min(CHUNKS_PER_DOCUMENT, chunks - d * CHUNKS_PER_DOCUMENT)
            texts = [" ".join(rng.choice(WORDS, 40)) + f" d{d} c{i}" for i in range(count)]
            vectors = rng.standard_normal((count, DIMENSION)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            doc_id = f"doc-{d:07d}"  # names (and ids) in the order an export lists them
            content = "\n\n".join(texts)
            writer.write("documents", {
                "id": doc_id, "knowledge_base_id": KB_ID, "name": f"{doc_id}.md", "source_url": None,
                "source_path": None, "content": content, "content_hash": _sha(content), "tags": {},
                "chunk_count": count, "token_count": 42 * count, "created_at": CREATED, "revision": 1,
                "status": "ready", "error": None, "secret_chunks": []})
            for i, text in enumerate(texts):
                writer.write("chunks", {
                    "id": f"{doc_id}:1:{i}", "document_id": doc_id, "chunk_index": i, "content": text,
                    "context": f"{doc_id}.md", "token_count": 42, "content_hash": _sha(text), "pages": [],
                    "secret": False, "embedding": pack_vector(vectors[i].tolist())})
        writer.finish()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Model:
    """The archive's profile, so nothing is re-embedded (and any embedding would fail loudly)."""

    model_id, dimension = MODEL, DIMENSION

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("the bulk path embeds nothing")

    def embed_documents(self, texts: Any) -> list[list[float]]:
        raise AssertionError("the bulk path embeds nothing")


def load(archive: Path, data: Path, searches: bool = True) -> dict[str, Any]:
    """Import the archive into `data` (empty); the importer's report with the rates of its phases."""
    os.environ.update({"AGENTKB_DATA_DIR": str(data), "AGENTKB_BACKEND": "embedded",
                       "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"})
    from agentkb.composition import get_ports
    from agentkb.services.portability.importer import import_archive

    ports = get_ports().replace(embedder=_Model())
    started = time.perf_counter()
    report = import_archive(ports, archive)
    seconds = time.perf_counter() - started
    chunks = report.tally.written["chunks"]
    assert report.tally.reembedded == 0 and "chunks" in report.verified, report.as_dict()
    phases = {name: round(s, 2) for name, s in report.seconds.items()}
    if searches:
        phases.update(_first_searches(ports))
    return {"chunks": chunks, "documents": report.tally.written["documents"], "seconds": round(seconds, 2),
            "chunksPerSecond": round(chunks / seconds), "phases": phases,
            "writeChunksPerSecond": round(chunks / report.seconds["write"]),
            "peakRssMb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def _first_searches(ports: Any) -> dict[str, float]:
    """Seconds of the first BM25 and kNN searches after the load: the tantivy indexes and the vector table catch up
    from the change logs there (the bulk path leaves that to them, as every embedded write does)."""
    from agentkb.models.domain import IndexQuery

    out = {}
    for leg, query in (("firstLexicalSearch", IndexQuery(WORKSPACE, (KB_ID,), text="protein d7 c1", limit_per_kb=5)),
                       ("firstVectorSearch", IndexQuery(WORKSPACE, (KB_ID,), vector=[1 / DIMENSION ** 0.5] * DIMENSION,
                                                        limit_per_kb=5))):
        started = time.perf_counter()
        hits = ports.index.lexical_search(query) if query.text else ports.index.vector_search(query)
        out[leg] = round(time.perf_counter() - started, 2)
        assert hits, leg
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, help="where the archive and the data dir go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the workdir")
    parser.add_argument("--import-only", action="store_true", help="no first searches after the import (its RSS alone)")
    parser.add_argument("--load", nargs=2, type=Path, metavar=("ARCHIVE", "DATA"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        print(json.dumps(load(*args.load, searches=not args.import_only)))
        return
    work = args.workdir or Path(tempfile.mkdtemp(prefix="agentkb-bulk-"))
    work.mkdir(parents=True, exist_ok=True)
    archive = work / f"bulk-{args.chunks}.jsonl"
    if not archive.exists():
        started = time.perf_counter()
        build(archive, args.chunks)
        print(f"built {archive} ({archive.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.0f} s",
              file=sys.stderr)
    data = work / "data"
    shutil.rmtree(data, ignore_errors=True)
    done = subprocess.run([sys.executable, "-m", "bench.portability.bulk", "--load", str(archive), str(data),
                           *(["--import-only"] if args.import_only else [])],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"import failed: {done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps({"archiveBytes": archive.stat().st_size, **result}))
    if not args.keep and args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
