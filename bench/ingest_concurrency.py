"""Memory writes while a 400 KB document is indexed: do writes wait on each other's embedding? (issue 16)

Starts `agentkb serve` on the demo data, sends one ~400 KB document (real text: files under /usr/share/doc, or
the demo corpus repeated), and meanwhile writes memories one after another until the document is `ready`,
timing each. Prints the memory-write p50/p95/p99/max, the document's status code and the time until it was
searchable, next to the same writes with no document being indexed (baseline, measured first in the same run:
the machine may be shared). Target: memory write p99 under 200 ms.

    .venv/bin/python bench/ingest_concurrency.py [--kb-bytes 400000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_server import ROOT, demo_server  # noqa: E402


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


def run(size: int, max_wait_s: float) -> dict[str, Any]:
    with demo_server() as server:
        base, key, kb = server["base"], server["key"], server["kb"]
        content = corpus_text(size)
        outcome: dict[str, Any] = {}

        def post_document() -> None:
            status, body, elapsed = call(base, key, "POST", f"/api/v2/knowledge/bases/{kb}/documents",
                                         {"workspaceId": "demo", "name": "big.md", "content": content})
            outcome.update(status=status, seconds=elapsed, id=(body or {}).get("data", {}).get("id"))

        baseline = [write_memory(base, key, f"baseline-{i}")[1] for i in range(BASELINE_WRITES)]
        started = time.perf_counter()
        writer = threading.Thread(target=post_document)
        writer.start()
        latencies: list[float] = []
        statuses: set[int] = set()
        i = 0
        while True:
            status, elapsed = write_memory(base, key, f"bench-{i}")
            latencies.append(elapsed)
            statuses.add(status)
            i += 1
            if time.perf_counter() - started > WRITE_WINDOW_S or (
                    not writer.is_alive() and _ready(base, key, kb, outcome.get("id"))):
                break
        writer.join()
        measured = time.perf_counter() - started
        print(json.dumps({"memoryWriteMs": percentiles(latencies), "baselineMemoryWriteMs": percentiles(baseline),
                          "memoryWrites": len(latencies), "afterSeconds": round(measured, 1)}), file=sys.stderr,
              flush=True)  # the writes' numbers first: the indexing may take long on a loaded machine
        ready = _ready(base, key, kb, outcome.get("id"))
        while not ready and time.perf_counter() - started < max_wait_s:  # the rest of the indexing, no writes
            time.sleep(2)
            ready = _ready(base, key, kb, outcome.get("id"))
        searchable = time.perf_counter() - started
        return {"documentBytes": len(content.encode()), "documentStatus": outcome.get("status"),
                "documentResponseSeconds": round(outcome.get("seconds", 0), 2),
                "secondsUntilSearchable": round(searchable, 2) if ready else f"> {max_wait_s:.0f} (still indexing)",
                "memoryWrites": len(latencies),
                "memoryStatuses": sorted(statuses), "memoryWriteMs": percentiles(latencies),
                "baselineMemoryWriteMs": percentiles(baseline)}


BASELINE_WRITES = 100
WRITE_WINDOW_S = 120.0  # memory writes are timed while the document is indexed, for at most this long


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
    parser.add_argument("--max-wait", type=float, default=1800.0, help="seconds to wait for the document to be ready")
    args = parser.parse_args()
    print(json.dumps(run(args.kb_bytes, args.max_wait), indent=2))


if __name__ == "__main__":
    main()
