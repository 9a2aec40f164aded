"""Export and import throughput, peak RSS and archive size on a BEIR corpus (issue 25).

Each phase runs in its own process (so its peak RSS is its own), on data dirs under --workdir:
  1. seed:    the corpus ingested into `src/` through the ingest service (as bench.quality does), embedded by a
     feature-hashed 384-d embedder (the local model's dimension: the same bytes per vector, without the hours the
     local model takes on a shared 2-core machine); the first --reembed-docs documents also into `small-src/`;
  2. export:  `src/` -> `ws.jsonl` (documents/s, chunks/s, peak RSS; the archive's size against the data dir's);
  3. import:  `ws.jsonl` -> `same/`, same embedding profile: nothing is embedded (documents/s, chunks/s, peak RSS);
  4. reembed: the small workspace's archive -> `re/`, where the local model (MiniLM) is the embedder, so every chunk
     is embedded again by it; bracketed by two runs of the model alone on the same texts in the importer's batch
     size, giving the ratio of re-embedding throughput to the model's own (target >= 0.9).

    .venv/bin/python -m bench.portability.throughput --dataset bench/data/scifact [--limit-docs N]
        [--reembed-docs 200] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

WORKSPACE, SMALL = "bench", "bench-small"


class Hashed:
    """Feature-hashed bag of words at the local model's dimension (testkit's Titan double), fast and deterministic."""

    model_id, dimension = "hashed-384", 384

    def embed_query(self, text: str) -> list[float]:
        from testkit.bedrock import hashed_embedding

        return hashed_embedding(text, self.dimension)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        from testkit.bedrock import hashed_embedding

        return [hashed_embedding(t, self.dimension) for t in texts]


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _use(data: Path) -> Any:
    os.environ.update({"AGENTKB_DATA_DIR": str(data), "AGENTKB_BACKEND": "embedded",
                       "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"})
    from agentkb.composition import get_ports, reset_ports
    from agentkb.config import reset_settings

    reset_settings()
    reset_ports()
    return get_ports()


def seed(work: Path, dataset: Path, limit: int | None, small: int) -> dict[str, Any]:
    from bench.beir import load_corpus

    ports = _use(work / "src").replace(embedder=Hashed())
    corpus = load_corpus(dataset)[:limit]
    started = time.perf_counter()
    chunks = _ingest(ports, WORKSPACE, corpus)
    seconds = time.perf_counter() - started
    small_chunks = _ingest(_use(work / "small-src").replace(embedder=Hashed()), SMALL, corpus[:small])
    return {"documents": len(corpus), "chunks": chunks, "seconds": round(seconds, 1), "smallChunks": small_chunks}


def _ingest(ports: Any, workspace: str, corpus: list[dict[str, str]]) -> int:
    from agentkb.local.operator import OPERATOR, create_kb, deps
    from agentkb.models.ingest import AddDocumentRequest
    from agentkb.services.ingest.service import add_document, prefetch_embeddings

    kb = create_kb(ports, workspace, "scifact", None, [])
    contents = [f"# {d['title']}\n\n{d['text']}" if d.get("title") else d["text"] for d in corpus]
    chunks = 0
    for i, doc in enumerate(corpus):
        if i % 32 == 0:
            prefetch_embeddings(deps(ports), kb, contents[i:i + 32])
        chunks += add_document(kb.id, AddDocumentRequest(workspaceId=workspace, name=doc["_id"], content=contents[i]),
                               OPERATOR, deps(ports)).chunk_count
    return chunks


def export(work: Path) -> dict[str, Any]:
    from agentkb.services.portability.export import ExportRequest, export_workspace

    with (work / "small.jsonl").open("w", encoding="utf-8") as out:
        export_workspace(_use(work / "small-src"), ExportRequest(SMALL), out, "embedded")
    ports = _use(work / "src").replace(embedder=Hashed())
    started = time.perf_counter()
    with (work / "ws.jsonl").open("w", encoding="utf-8") as out:
        manifest = export_workspace(ports, ExportRequest(WORKSPACE), out, "embedded")
    return _rates(manifest["documents"]["count"], manifest["chunks"]["count"], time.perf_counter() - started) | {
        "archiveBytes": (work / "ws.jsonl").stat().st_size, "dataDirBytes": _size(work / "src")}


def import_same(work: Path) -> dict[str, Any]:
    from agentkb.services.portability.importer import import_archive

    ports = _use(work / "same").replace(embedder=Hashed())
    started = time.perf_counter()
    report = import_archive(ports, work / "ws.jsonl")
    seconds = time.perf_counter() - started
    assert report.tally.reembedded == 0 and len(report.verified) == 9, report.as_dict()
    return _rates(report.tally.written["documents"], report.tally.written["chunks"], seconds) | {
        "dataDirBytes": _size(work / "same"), "phases": {k: round(v, 2) for k, v in report.seconds.items()}}


def reembed(work: Path) -> dict[str, Any]:
    from agentkb.services.portability.archive_file import ArchiveReader
    from agentkb.services.portability.importer import import_archive
    from agentkb.services.portability.sinks import EMBED_BATCH

    ports = _use(work / "re")
    model = ports.embedder
    texts = [f"{r['context']}\n{r['content']}" if r["context"] else r["content"]
             for s, r in ArchiveReader(work / "small.jsonl").records() if s == "chunks"]
    model.embed_documents(texts[:EMBED_BATCH])  # load and warm the model
    first = _model_run(model, texts, EMBED_BATCH)
    started = time.perf_counter()
    report = import_archive(ports, work / "small.jsonl")
    seconds = time.perf_counter() - started
    second = _model_run(model, texts, EMBED_BATCH)
    assert report.tally.reembedded == len(texts), report.as_dict()
    model_rate = len(texts) / ((first + second) / 2)
    rates = _rates(report.tally.written["documents"], report.tally.written["chunks"], seconds)
    return rates | {"modelSeconds": [round(first, 1), round(second, 1)],
                    "modelChunksPerSecond": round(model_rate, 1),
                    "ratioToModel": round(rates["chunksPerSecond"] / model_rate, 3)}


def _model_run(model: Any, texts: list[str], batch: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(texts), batch):
        model.embed_documents(texts[i:i + batch])
    return time.perf_counter() - started


def _rates(documents: int, chunks: int, seconds: float) -> dict[str, Any]:
    return {"documents": documents, "chunks": chunks, "seconds": round(seconds, 2),
            "documentsPerSecond": round(documents / seconds, 1), "chunksPerSecond": round(chunks / seconds, 1)}


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


PHASES = {"export": export, "import": import_same, "reembed": reembed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, required=True, help="BEIR folder (corpus.jsonl)")
    parser.add_argument("--limit-docs", type=int, help="only the first N documents")
    parser.add_argument("--reembed-docs", type=int, default=200,
                        help="documents re-embedded by the local model (0: no reembed phase)")
    parser.add_argument("--workdir", type=Path, help="where the data dirs and the archive go (default: a temp dir)")
    parser.add_argument("--phase", choices=["seed", *PHASES], help=argparse.SUPPRESS)  # one phase, in this process
    args = parser.parse_args()
    if args.phase:
        result = seed(args.workdir, args.dataset, args.limit_docs, args.reembed_docs) if args.phase == "seed" \
            else PHASES[args.phase](args.workdir)
        print(json.dumps({**result, "peakRssMb": _peak_rss_mb()}))
        return
    from bench.beir import require_dataset

    require_dataset(args.dataset)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="agentkb-portability-"))
    out: dict[str, Any] = {"dataset": str(args.dataset), "workdir": str(work)}
    for phase in ("seed", *(p for p in PHASES if args.reembed_docs > 0 or p != "reembed")):  # 0: no reembed phase
        command = [sys.executable, "-m", "bench.portability.throughput", "--dataset", str(args.dataset),
                   "--workdir", str(work), "--phase", phase, "--reembed-docs", str(args.reembed_docs)]
        if args.limit_docs:
            command += ["--limit-docs", str(args.limit_docs)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"phase {phase} failed: {done.stderr[-2000:]}")
        out[phase] = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps({phase: out[phase]}), file=sys.stderr)
    out["archiveToDataDir"] = round(out["export"]["archiveBytes"] / out["export"]["dataDirBytes"], 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
