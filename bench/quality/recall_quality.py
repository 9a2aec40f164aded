"""Recall quality on LoCoMo (long conversations): evidence recall@10 of every recall path, through the handlers.

    python -m bench.quality.recall_quality --dataset /path/to/locomo-dev [--json] [--occurred-at] [--speakers]

LoCoMo (Maharana et al., ACL 2024): each conversation becomes one workspace; each dialog turn is written as one
workspace memory through `POST /v1/memories` (the ingest function's handler, so the real embedding, entity links
and indexing run), body `"<session date> <speaker>: <text>"` plus `" [shares a photo: <caption>]"` when the turn
has one. Every answerable question (categories 1-4) is then recalled with `max_items` 10 through
`POST /v1/recall` (the recall handler), `POST /v1/recall?fallback=fts_only` and `POST /ob1/recall`, and ranked by a
plain Okapi BM25 (k1 1.2, b 0.75, lowercase words) over the same bodies. Evidence recall@10 of a question: the
share of its evidence turns among the ten recalled; averaged per category and overall.

`--occurred-at`: each memory also says when its turn happened (`occurred_at`, the session's date and time).
`--speakers`: each memory names its speaker as a person entity (`entities.people`), which links the graph leg.
`--engine aws`: the same handlers over DynamoDB (moto) and the OpenSearch memory index (testkit's fake), with the
local embedding model. One JSON line with `--json`, else a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AGENTKB_LOG_LEVEL", "ERROR")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
os.environ["AGENTKB_RATE_LIMIT_PER_MINUTE"] = "1000000"  # a benchmark, not a tenant
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
PATHS = ("recall", "recall_fts_only", "ob1_recall", "bm25")
K = 10
_WORD = re.compile(r"\w+")
_SESSION = re.compile(r"^session_(\d+)$")


# -- the dataset ------------------------------------------------------------------------------------------------
def session_time(text: str) -> str:
    """LoCoMo's "1:56 pm on 8 May, 2023" as an RFC 3339 UTC timestamp."""
    parsed = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return parsed.replace(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def turns(conversation: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every dialog turn of a conversation, in order: {dia_id, speaker, body, occurred_at}."""
    sessions = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key))
                      and isinstance(conversation[key], list))
    for number in sessions:
        date = conversation[f"session_{number}_date_time"]
        for turn in conversation[f"session_{number}"]:
            body = f"{date} {turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                body += f" [shares a photo: {turn['blip_caption']}]"
            yield {"dia_id": turn["dia_id"], "speaker": turn["speaker"], "body": body,
                   "occurred_at": session_time(date)}


def evidence_ids(question: dict[str, Any]) -> set[str]:
    """A question's evidence turn ids (a few annotations join several with ';')."""
    return {part.strip() for ref in question.get("evidence", []) for part in str(ref).split(";") if part.strip()}


def load(dataset: Path) -> dict[str, dict[str, Any]]:
    files = sorted(dataset.glob("*.json"))
    if not files:
        sys.exit(f"{dataset}: no LoCoMo conversation (*.json) here; see bench/README.md")
    out = {}
    for path in files:
        raw = json.loads(path.read_text())
        out[path.stem] = raw.get("conversation", raw) | {"qa": raw.get("qa", [])}
    return out


# -- the BM25 baseline -------------------------------------------------------------------------------------------
def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Bm25:
    """Okapi BM25 (k1 1.2, b 0.75) over lowercase words, the idf of Lucene (always positive)."""

    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = {key: Counter(words(text)) for key, text in docs.items()}
        self.length = {key: sum(tf.values()) for key, tf in self.tf.items()}
        self.average = sum(self.length.values()) / max(1, len(self.length))
        df: Counter[str] = Counter(w for tf in self.tf.values() for w in tf)
        n = len(self.tf)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def top(self, query: str, k: int) -> list[str]:
        terms = set(words(query))
        scored = []
        for key, tf in self.tf.items():
            norm = self.k1 * (1 - self.b + self.b * self.length[key] / self.average)
            score = sum(self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            if score > 0:
                scored.append((-score, key))
        scored.sort()
        return [key for _, key in scored[:k]]


# -- the service ---------------------------------------------------------------------------------------------------
@contextmanager
def service(engine: str) -> Iterator[Callable[[list[str]], str]]:
    """Fresh ports for `engine`; yields mint(workspaces) -> an API key with read and write scopes."""
    from agentkb.composition import get_ports, reset_ports
    from agentkb.config import reset_settings
    from agentkb.services.access.api_keys import create_api_key

    with tempfile.TemporaryDirectory(prefix="agentkb-recall-quality-") as tmp:
        os.environ["AGENTKB_DATA_DIR"] = tmp
        reset_settings()
        reset_ports()
        if engine == "aws":
            from bench.quality.recall_quality_aws import aws_ports

            with aws_ports(Path(tmp)) as ports:
                yield lambda ws: create_api_key(ports.keys, ports.secrets, ws, ["api:read", "api:write"], "bench")[0]
            return
        ports = get_ports()
        yield lambda ws: create_api_key(ports.keys, ports.secrets, ws, ["api:read", "api:write"], "bench")[0]
        reset_ports()


def call(handler: Any, method: str, path: str, body: Any, key: str, query: dict[str, str] | None = None) -> Any:
    from agentkb.local.events import rest_event
    from agentkb.local.lambda_context import LocalLambdaContext

    response = handler(rest_event(method, path, body, key=key, query=query), LocalLambdaContext())
    if response["statusCode"] >= 300:
        raise SystemExit(f"{method} {path}: {response['statusCode']} {response['body'][:500]}")
    return json.loads(response["body"])


def memory_payload(ws: str, turn: dict[str, Any], occurred_at: bool, speakers: bool) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "workspace_id": ws, "visibility": "workspace", "type": "note",
        # A name that shares no word with the dialog: only the body is meant to match.
        "name": "turn-" + hashlib.sha1(f"{ws}/{turn['dia_id']}".encode()).hexdigest()[:12],
        "body": turn["body"]}
    if occurred_at:
        payload["occurred_at"] = turn["occurred_at"]
    if speakers:
        payload["entities"] = {"people": [turn["speaker"]]}
    return payload


def recall_payload(ws: str, query: str) -> dict[str, Any]:
    return {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": ws, "task_type": "general",
            "query": query, "entities": {},
            "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
                      "include_stale": False},
            "limits": {"max_items": K, "max_tokens": 20000},
            "sensitivity": {"contains_code": False, "contains_customer_data": False,
                            "contains_private_meeting_data": False}}


def ob1_payload(ws: str, query: str) -> dict[str, Any]:
    return {"schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": ws, "query": query,
            "scope": {"project_only": False}, "limits": {"max_items": K, "max_tokens": 20000}}


def recalled(path: str, ws: str, question: str, key: str) -> list[str]:
    """The memory ids one recall path returns for a question, best first."""
    from ingest.handler import lambda_handler as ingest_handler
    from recall.handler import lambda_handler as recall_handler

    if path == "ob1_recall":
        answer = call(ingest_handler, "POST", "/ob1/recall", ob1_payload(ws, question), key)
        return [m["memory_id"] for m in answer["memories"]]
    query = {"fallback": "fts_only"} if path == "recall_fts_only" else None
    answer = call(recall_handler, "POST", "/v1/recall", recall_payload(ws, question), key, query)
    return [str(i["memory_id"]) for i in answer["results"]]


def run(dataset: Path, engine: str, occurred_at: bool, speakers: bool,
        limit_questions: int | None = None) -> dict[str, Any]:
    from ingest.handler import lambda_handler as ingest_handler

    data = load(dataset)
    scores: dict[str, dict[int, list[float]]] = {p: {c: [] for c in CATEGORIES} for p in PATHS}
    timings: dict[str, list[float]] = {p: [] for p in PATHS}
    written, write_s = 0, 0.0
    with service(engine) as mint:
        key = mint([f"locomo-{name}" for name in data])
        for name, conversation in data.items():
            ws = f"locomo-{name}"
            by_memory: dict[str, str] = {}
            bodies: dict[str, str] = {}
            started = time.perf_counter()
            for turn in turns(conversation):
                answer = call(ingest_handler, "POST", "/v1/memories",
                              memory_payload(ws, turn, occurred_at, speakers), key)
                by_memory[str(answer["memory_id"])] = turn["dia_id"]
                bodies[turn["dia_id"]] = turn["body"]
                written += 1
            write_s += time.perf_counter() - started
            bm25 = Bm25(bodies)
            questions = [q for q in conversation["qa"] if q.get("category") in CATEGORIES and evidence_ids(q)]
            for q in questions[:limit_questions]:
                evidence = evidence_ids(q)
                found: dict[str, list[str]] = {}
                for path in PATHS[:-1]:
                    started = time.perf_counter()
                    found[path] = [by_memory.get(i, "") for i in recalled(path, ws, q["question"], key)][:K]
                    timings[path].append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                found["bm25"] = bm25.top(q["question"], K)
                timings["bm25"].append((time.perf_counter() - started) * 1000)
                for path, got in found.items():
                    scores[path][q["category"]].append(len(evidence & set(got)) / len(evidence))
    out: dict[str, Any] = {"bench": "recall_quality", "dataset": dataset.name, "engine": engine,
                           "conversations": sorted(data), "memories": written,
                           "questions": sum(len(v) for v in scores["bm25"].values()),
                           "occurred_at": occurred_at, "speakers": speakers, "k": K,
                           "write_per_s": round(written / write_s, 1) if write_s else None, "recall_at_10": {}}
    for path in PATHS:
        every = [s for values in scores[path].values() for s in values]
        out["recall_at_10"][path] = {
            **{CATEGORIES[c]: round(statistics.fmean(v), 3) if v else None for c, v in scores[path].items()},
            "overall": round(statistics.fmean(every), 3) if every else None,
            "p50_ms": round(statistics.median(timings[path]), 2) if timings[path] else None}
    out["questions_per_category"] = {CATEGORIES[c]: len(v) for c, v in scores["bm25"].items()}
    return out


def table(result: dict[str, Any]) -> str:
    columns = [*CATEGORIES.values(), "overall", "p50_ms"]
    lines = [f"| path | {' | '.join(columns)} |", "|---" * (len(columns) + 1) + "|"]
    for path, row in result["recall_at_10"].items():
        lines.append(f"| {path} | " + " | ".join(str(row[c]) for c in columns) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True, help="a folder of LoCoMo conversations (<id>.json)")
    parser.add_argument("--engine", choices=("embedded", "aws"), default="embedded")
    parser.add_argument("--occurred-at", action="store_true", help="write each turn's session time as occurred_at")
    parser.add_argument("--speakers", action="store_true", help="link each turn to its speaker (a person entity)")
    parser.add_argument("--limit-questions", type=int, default=None, help="per conversation (a quick look)")
    parser.add_argument("--json", action="store_true", help="one JSON line")
    args = parser.parse_args()
    if not args.dataset.is_dir():
        sys.exit(f"{args.dataset}: not a folder")
    result = run(args.dataset, args.engine, args.occurred_at, args.speakers, args.limit_questions)
    print(json.dumps(result, separators=(",", ":")) if args.json else table(result))


if __name__ == "__main__":
    main()
