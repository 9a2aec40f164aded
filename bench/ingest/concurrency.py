"""Memory writes while documents are indexed: do writes wait on each other's embedding? (issue 16)

Starts `agentkb serve` on the demo data (rate limit lifted: the writes must measure the write path, not 429s) and
times memory writes, one after another, in three phases of the same server:
  idle     no document being written (the baseline: the machine may be shared, so it is measured in the same run);
  sync     while another client posts documents just under the 202 threshold back to back (each is chunked and
           embedded within its request, so a write path serialised behind requests shows up here);
  big      while a ~400 KB document (real text: files under /usr/share/doc, or the demo corpus repeated) is
           accepted with 202 and indexed in the background, until it is searchable (or --window seconds).
Prints p50/p95/p99/max per phase, the loaded/idle p99 ratios and the time until the big document was searchable.
Target: memory write p99 under 200 ms while the big document indexes.

`--compare DIR` runs the same phases first against another checkout's functions/ (e.g. the main branch, the
"before") and then this tree's, side by side in one run.

    .venv/bin/python -m bench.ingest.concurrency [--kb-bytes 400000] [--compare /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.local_server import ROOT, demo_server


def corpus_text(size: int) -> str:
    """Real prose of about `size` bytes (documentation files a Linux system ships, else the demo corpus)."""
    parts: list[str] = []
    total = 0
    sources = sorted(Path("/usr/share/doc").rglob("*")) + sorted((ROOT / "functions/agentkb/local/demo").rglob("*.md"))
    while total < size:
        for path in sources:
            if path.suffix in ("", ".md", ".txt") and path.is_file() and not path.is_symlink():
                try:
                    text = path.read_text(encoding="utf-8")
                except (UnicodeDecodeError, OSError):
                    continue
                parts.append(text)
                total += len(text.encode())
                if total >= size:
                    break
    return "\n\n".join(parts)[:size]


def call(base: str, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"X-API-Key": key, "Content-Type": "application/json"})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    elapsed = time.perf_counter() - start
    return status, json.loads(raw) if raw else None, elapsed


def run(functions_dir: Path, size: int, window_s: float, max_wait_s: float) -> dict[str, Any]:
    env = {"AGENTKB_RATE_LIMIT_PER_MINUTE": "1000000",
           "PYTHONPATH": os.pathsep.join([str(functions_dir), os.environ.get("PYTHONPATH", "")])}
    with demo_server(extra_env=env) as server:
        base, key, kb = server["base"], server["key"], server["kb"]
        idle = [write_memory(base, key, f"idle-{i}") for i in range(BASELINE_WRITES)]
        sync = _during_sync_documents(base, key, kb)
        big, searchable = _during_big_document(base, key, kb, corpus_text(size), window_s, max_wait_s)
    phases = {"idle": idle, "sync": sync, "big": big}
    result: dict[str, Any] = {name: summary(writes) for name, writes in phases.items()}
    for name in ("sync", "big"):
        result[f"{name}/idle p99"] = round(result[name]["p99"] / max(result["idle"]["p99"], 1e-9), 2)
    result["bigDocument"] = searchable
    return result


def _during_sync_documents(base: str, key: str, kb: str) -> list[tuple[int, float]]:
    """Memory writes while SYNC_DOCUMENTS documents of SYNC_CHARS characters are posted back to back (201)."""
    text = corpus_text(SYNC_CHARS * 2)
    statuses: list[int] = []

    def post_documents() -> None:
        for i in range(SYNC_DOCUMENTS):
            content = text[i * 997 % SYNC_CHARS:][:SYNC_CHARS]  # a different text each time: nothing cached
            status, _, _ = call(base, key, "POST", f"/api/v2/knowledge/bases/{kb}/documents",
                                {"workspaceId": "demo", "name": f"sync-{i}.md", "content": content})
            statuses.append(status)

    return _writes_while(base, key, "sync", threading.Thread(target=post_documents), lambda: False)


def _during_big_document(base: str, key: str, kb: str, content: str, window_s: float,
                         max_wait_s: float) -> tuple[list[tuple[int, float]], dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def post_document() -> None:
        status, body, elapsed = call(base, key, "POST", f"/api/v2/knowledge/bases/{kb}/documents",
                                     {"workspaceId": "demo", "name": "big.md", "content": content})
        outcome.update(status=status, seconds=elapsed, id=(body or {}).get("data", {}).get("id"))

    started = time.perf_counter()
    writes = _writes_while(base, key, "big", threading.Thread(target=post_document),
                           lambda: time.perf_counter() - started < window_s
                           and not _ready(base, key, kb, outcome.get("id")))
    print(json.dumps({"big": summary(writes)}), file=sys.stderr, flush=True)  # before the long wait below
    ready = _ready(base, key, kb, outcome.get("id"))
    while not ready and time.perf_counter() - started < max_wait_s:  # the rest of the indexing, no writes
        time.sleep(2)
        ready = _ready(base, key, kb, outcome.get("id"))
    searchable = time.perf_counter() - started
    return writes, {"bytes": len(content.encode()), "status": outcome.get("status"),
                    "responseSeconds": round(outcome.get("seconds", 0), 2),
                    "secondsUntilSearchable": round(searchable, 2) if ready else f"> {max_wait_s:.0f}"}


def _writes_while(base: str, key: str, name: str, load: threading.Thread,
                  keep_going: Callable[[], bool]) -> list[tuple[int, float]]:
    """Memory writes one after another while `load` runs (and then while keep_going() holds)."""
    load.start()
    writes: list[tuple[int, float]] = []
    while load.is_alive() or keep_going():
        writes.append(write_memory(base, key, f"{name}-{len(writes)}"))
    load.join()
    return writes


def summary(writes: list[tuple[int, float]]) -> dict[str, Any]:
    statuses = sorted({status for status, _ in writes})
    return {**percentiles([ms for _, ms in writes]), "writes": len(writes), "statuses": statuses}


BASELINE_WRITES = 100
SYNC_DOCUMENTS = 10
SYNC_CHARS = 30_000  # under the 32,000-character threshold: indexed within the request (201)


def write_memory(base: str, key: str, name: str) -> tuple[int, float]:
    status, _, elapsed = call(base, key, "POST", "/v1/memories", {
        "workspace_id": "demo", "visibility": "workspace", "type": "note", "name": name,
        "body": f"Memory {name} written while a big document is indexed: the deploy window is Friday."})
    return status, elapsed * 1000


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 1), "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
            "p99": round(ordered[int(0.99 * (len(ordered) - 1))], 1), "max": round(ordered[-1], 1)}


def _ready(base: str, key: str, kb: str, doc_id: str | None) -> bool:
    if doc_id is None:
        return True  # the POST failed: nothing to wait for (its status is reported)
    status, body, _ = call(base, key, "GET", f"/api/v2/knowledge/bases/{kb}/documents/{doc_id}?workspaceId=demo")
    return status == 200 and body["data"]["status"] != "indexing"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-bytes", type=int, default=400_000)
    parser.add_argument("--window", type=float, default=900.0,
                        help="at most this many seconds of memory writes while the big document indexes")
    parser.add_argument("--max-wait", type=float, default=1800.0, help="seconds to wait for the document to be ready")
    parser.add_argument("--compare", type=Path, help="another checkout: its functions/ run first, as the 'before'")
    args = parser.parse_args()
    trees = ([("before", args.compare / "functions")] if args.compare else []) + [("this tree", ROOT / "functions")]
    results = {}
    for label, functions_dir in trees:
        print(f"{label}: {functions_dir}", file=sys.stderr, flush=True)
        results[label] = run(functions_dir, args.kb_bytes, args.window, args.max_wait)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
