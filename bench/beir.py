"""BEIR dataset loading and IR metrics (nDCG@k, recall@k, MRR@k) for the benchmarks."""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

LAYOUT = "corpus.jsonl, queries.jsonl, qrels/<split>.tsv"


def require_dataset(dataset: Path, split: str | None = None) -> None:
    """Exit with one line unless `dataset` is a BEIR folder (bench/README.md says where to get SciFact)."""
    needed = ["corpus.jsonl", "queries.jsonl", *([f"qrels/{split}.tsv"] if split else [])]
    missing = [name for name in needed if not (dataset / name).is_file()]
    if missing:
        sys.exit(f"no BEIR dataset at {dataset} (missing {', '.join(missing)}; layout {LAYOUT}): see bench/README.md")


def load_corpus(dataset: Path) -> list[dict[str, str]]:
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_queries(dataset: Path) -> dict[str, str]:
    with (dataset / "queries.jsonl").open(encoding="utf-8") as fh:
        return {q["_id"]: q["text"] for q in map(json.loads, fh) if q}


def load_qrels(dataset: Path, split: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with (dataset / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t")
        next(reader)
        for query_id, doc_id, score in reader:
            qrels.setdefault(query_id, {})[doc_id] = int(score)
    return qrels


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    positives = {d for d, g in relevant.items() if g > 0}
    return len(positives & set(ranked[:k])) / len(positives) if positives else 0.0


def mrr_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    for i, d in enumerate(ranked[:k]):
        if relevant.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
