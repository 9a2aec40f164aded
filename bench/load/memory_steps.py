"""Where the local server's memory goes: RSS after each component warms, then under the steady soak's load.

One process plays `agentkb serve` (the real gateway and handlers on a loopback port, a data dir seeded by
`agentkb demo`) and measures itself after each step: handlers imported, ports built, the embedding model loaded
(tokenizer + its ONNX sessions), one more session of the same model (what each costs), one request of every kind
of bench/load/serve.py, then its steady workload (its own clients, in threads) for two equal phases. Per
step: RSS, its anonymous part (heap) and file-backed part (mapped libraries and model files), the Python heap as
tracemalloc counts it, and the thread count. The second load phase's growth says whether RSS has levelled off.

    .venv/bin/python -m bench.load.memory_steps --seconds 60              # two 60 s load phases, 8 clients
    MALLOC_ARENA_MAX=2 .venv/bin/python -m bench.load.memory_steps        # the same with glibc's arenas capped
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.load.serve import ClientState, client, remember, workload

ROOT = Path(__file__).resolve().parents[2]


def status_mb() -> dict[str, float]:
    fields = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file", "Threads": "threads"}
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in fields:
            number = float(value.split()[0])
            out[fields[name]] = number if name == "Threads" else round(number / 1024, 1)
    return out


STEPS: list[dict[str, Any]] = []


def step(name: str, **extra: Any) -> None:
    traced, _ = tracemalloc.get_traced_memory() if tracemalloc.is_tracing() else (0, 0)
    STEPS.append({"step": name, **status_mb(), "pythonHeap": round(traced / 2**20, 1), **extra})
    print(json.dumps(STEPS[-1]), file=sys.stderr, flush=True)


def seed(data_dir: Path) -> str:
    cli = [sys.executable, "-m", "agentkb.cli.main"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "functions")}
    subprocess.run([*cli, "demo", "--data-dir", str(data_dir)], env=env, capture_output=True, check=True, timeout=600)
    listed = subprocess.run([*cli, "kb", "list", "--workspace", "demo", "--data-dir", str(data_dir)], env=env,
                            capture_output=True, text=True, check=True, timeout=120)
    return listed.stdout.split("\t")[0].strip()


def load_phase(server: dict[str, Any], seconds: float, clients: int, snapshot_ids: list[str],
               states: list[ClientState]) -> int:
    results: list[tuple[str, float, int]] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=client, args=(server, deadline, results, snapshot_ids, lock, state))
               for state in states[:clients]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(results)


def run(seconds: float, clients: int, trace: bool) -> list[dict[str, Any]]:
    if trace:
        tracemalloc.start()
    step("interpreter")
    with tempfile.TemporaryDirectory(prefix="agentkb-memory-") as tmp:
        data_dir = Path(tmp) / "data"
        kb = seed(data_dir)
        os.environ.update({"AGENTKB_DATA_DIR": str(data_dir), "POWERTOOLS_METRICS_DISABLED": "true",
                           "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_LOG_LEVEL": "WARNING"})
        from agentkb.local import server as gateway

        for function in ("search", "ingest", "recall", "snapshot"):
            gateway._handler(function)
        step("handlers imported")
        from agentkb.composition import get_ports

        ports = get_ports()
        step("ports built")
        ports.embedder.embed_query("warm up")
        step("embedding model loaded")
        from agentkb.adapters.embedded import embedder as local_embedder

        extra = local_embedder._session(local_embedder._model_path(), 1)
        step("one more session of the model")
        del extra
        step("that session dropped")
        httpd = gateway.make_server("127.0.0.1", 0)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        server = {"host": "127.0.0.1", "port": httpd.server_port, "kb": kb,
                  "key": (data_dir / "dev-key").read_text().strip()}
        states = [ClientState(client_id=n, steady=True) for n in range(clients)]
        snapshot_ids: list[str] = []
        for i in range(10):  # one request of every kind, one client
            name, status = _one(server, kb, i, snapshot_ids, states[0])
            step(f"first {name}", status=status)
        for phase in ("load phase 1", "load phase 2"):
            requests = load_phase(server, seconds, clients, snapshot_ids, states)
            step(phase, requests=requests)
        httpd.shutdown()
        httpd.server_close()
    if trace:
        top = tracemalloc.take_snapshot().statistics("filename")[:8]
        STEPS.append({"step": "python heap by file", "top": [[str(s.traceback[0].filename).split("site-packages/")[-1],
                                                                round(s.size / 2**20, 1)] for s in top]})
    return STEPS


def _one(server: dict[str, Any], kb: str, i: int, snapshot_ids: list[str], state: ClientState) -> tuple[str, int]:
    """Request number i of one client through the gateway; (its kind, its status)."""
    conn = http.client.HTTPConnection(server["host"], server["port"], timeout=60)
    name, method, path, body = workload(kb, i, snapshot_ids, state)
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"X-API-Key": server["key"], "Content-Type": "application/json"})
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    remember(state, name, body, response.status, payload)
    if name == "snapshot_create" and response.status == 201:
        snapshot_ids.append(json.loads(payload)["snapshotId"])
    return name, response.status


def _without_ort_arena() -> None:
    import onnxruntime as ort

    class NoArena(ort.SessionOptions):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.enable_cpu_mem_arena = False

    ort.SessionOptions = NoArena


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each of the two load phases")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--no-tracemalloc", action="store_true", help="RSS only (tracemalloc slows allocation)")
    parser.add_argument("--no-ort-arena", action="store_true",
                        help="sessions without onnxruntime's CPU memory arena (what the arena holds)")
    args = parser.parse_args()
    if args.no_ort_arena:
        _without_ort_arena()
    steps = run(args.seconds, args.clients, not args.no_tracemalloc)
    print(json.dumps({"clients": args.clients, "secondsPerPhase": args.seconds, "ortArena": not args.no_ort_arena,
                      "mallocArenaMax": os.environ.get("MALLOC_ARENA_MAX"), "steps": steps}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
