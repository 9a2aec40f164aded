"""Cold start: each handler module's import + init with AGENTKB_BACKEND=aws against a bare
`import aws_lambda_powertools, boto3, pydantic`, each measured in a fresh interpreter, median of N runs.

    make build && .venv/bin/python -m bench.coldstart.run [--runs 10] [--layout bundle|source]

    make build && .venv/bin/python -m bench.coldstart.run --first-response [--runs 21] [--baseline main]

--first-response measures what a user waits for instead: a fresh process with the stack's own environment
(X-Ray tracing on) answering its first search, recall and snapshot request, the network stubbed below urllib3,
against a floor process that imports Powertools' event handler, pydantic and boto3, creates the same clients and
answers a trivial route (bench/coldstart/first_response.py says how).

Prints one JSON line. Target: every handler's median <= 1.15 x the bare import's median. "init" builds every
AWS port through the composition root (no network: clients and credentials are created on first request).

--layout bundle (default) runs what Lambda runs: `.build/functions` and the `.build/deps/python` layer first on
the path (their shipped bytecode, the layer's pydantic), boto3 and Powertools from this environment (Lambda's
runtime and the Powertools layer provide them), and no bytecode writes (/var/task is read-only). Both the bare
import and the handlers run in that layout. --layout source runs the repository's functions/ in the dev venv.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from testkit.environment import aws_environment  # the same AGENTKB_* the bundle-import test uses

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = ("search", "recall", "snapshot", "ingest")
TARGET_RATIO = 1.15

BARE = """
import time
t0 = time.perf_counter()
import aws_lambda_powertools, boto3, pydantic
print(time.perf_counter() - t0)
"""
# What any Powertools REST handler with pydantic validation imports before a line of its own: for reference.
FLOOR = """
import time
t0 = time.perf_counter()
import aws_lambda_powertools, boto3, pydantic
import aws_lambda_powertools.event_handler
from pydantic import BaseModel, Field
print(time.perf_counter() - t0)
"""
HANDLER = """
import time
t0 = time.perf_counter()
import {name}.handler
from agentkb.composition import get_ports
c = get_ports()
for port in ("catalog", "index", "embedder", "tokenizer", "reranker", "keys", "secrets", "rate_limiter"):
    getattr(c, port)
t1 = time.perf_counter()
from agentkb.api.functions import APPS
from agentkb.models.domain import RateDecision
class Unlimited:
    def hit(self, key_id, limit, now): return RateDecision(limit, limit - 1, int(now) // 60 * 60 + 60, True, 0)
unlimited = c.replace(rate_limiter=Unlimited())
APPS["{name}"]().dependency_overrides[get_ports] = lambda: unlimited
class Context:
    function_name, function_version, memory_limit_in_mb = "{name}", "$LATEST", 1024
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:{name}"
    aws_request_id = "coldstart"
    def get_remaining_time_in_millis(self): return 30000
event = {{"operation": "{operation}", "body": {{}}, "pathParameters": {path}}}
t2 = time.perf_counter()
answer = {name}.handler.lambda_handler(event, Context())
assert answer["statusCode"] == 400, answer
print(t1 - t0, t1 - t0 + time.perf_counter() - t2)
"""
# The first request of a cold start, without any AWS call: a direct invocation of the function's main operation
# whose body fails validation, so it pays what init deferred (the request model's validator, Powertools'
# validation middleware) but no network. The gate spends the caller's rate limit before the body is validated (a
# direct invocation's too, as `direct:service`), so the limiter is answered in-process by a stand-in, through the
# function's dependency overrides; setting it up is not timed (t1..t2).
FIRST_REQUEST = {"search": ("searchKnowledge", None), "recall": ("recall", None), "snapshot": ("createSnapshot", None),
                 "ingest": ("addDocument", {"knowledgeBaseId": "kb"})}


def layout_environment(layout: str) -> tuple[dict[str, str], Path]:
    """(environment, working directory) of one layout."""
    env = aws_environment()
    if layout == "source":
        return env, ROOT / "functions"
    functions, deps = ROOT / ".build" / "functions", ROOT / ".build" / "deps" / "python"
    if not any(functions.rglob("*.pyc")):
        raise SystemExit("no built bundle with bytecode in .build/: run `make build` first (or --layout source)")
    env["PYTHONPATH"] = os.pathsep.join((str(functions), str(deps)))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env, functions


def measure(code: str, env: dict[str, str], cwd: Path, runs: int) -> list[float]:
    """The median of each number the snippet prints on its last line, over `runs` fresh interpreters."""
    samples = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"measurement failed:\n{done.stderr}")
        samples.append([float(v) for v in done.stdout.strip().splitlines()[-1].split()])
    return [statistics.median(column) for column in zip(*samples, strict=True)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--layout", choices=("bundle", "source"), default="bundle")
    parser.add_argument("--first-response", action="store_true", help="cold start to the first answered request")
    parser.add_argument("--recording", type=Path, default=ROOT / ".build" / "coldstart-recording.json")
    parser.add_argument("--rerecord", action="store_true", help="record the AWS exchanges again (after code changes)")
    parser.add_argument("--baseline", metavar="REF", help="with --first-response: also measure this git revision's "
                        "bundle (e.g. main) in the same interleaved rounds (bench/coldstart/baseline.py)")
    args = parser.parse_args(argv)
    env, cwd = layout_environment(args.layout)
    if args.first_response:
        return first_response(args, env, cwd)
    bare = measure(BARE, env, cwd, args.runs)[0]
    floor = measure(FLOOR, env, cwd, args.runs)[0]
    measured = {name: measure(HANDLER.format(name=name, operation=FIRST_REQUEST[name][0],
                                             path=repr(FIRST_REQUEST[name][1])), env, cwd, args.runs)
                for name in HANDLERS}
    handlers = {name: values[0] for name, values in measured.items()}
    first = {name: values[1] for name, values in measured.items()}
    ratios = {name: round(value / bare, 3) for name, value in handlers.items()}
    print(json.dumps({"bench": "coldstart", "layout": args.layout, "runs": args.runs, "python": sys.version.split()[0],
                      "bare_import_ms": round(bare * 1000, 1),
                      "framework_floor_ms": round(floor * 1000, 1), "framework_floor_ratio": round(floor / bare, 3),
                      "handler_ms": {k: round(v * 1000, 1) for k, v in handlers.items()},
                      "ratio": ratios, "target_ratio": TARGET_RATIO,
                      "first_rejected_request_ms": {k: round(v * 1000, 1) for k, v in first.items()},
                      "ok": all(r <= TARGET_RATIO for r in ratios.values()), "cpus": os.cpu_count()}))
    return 0


def first_response(args: argparse.Namespace, env: dict[str, str], cwd: Path) -> int:
    from bench.coldstart.first_response import load_average, measure

    baseline = None
    if args.baseline:
        from bench.coldstart.baseline import prepare

        baseline = prepare(args.baseline)
    before = load_average()
    functions = measure(args.recording, args.runs, env, cwd, rerecord=args.rerecord,
                        progress=args.recording.with_name("coldstart-first-response.partial.json"), baseline=baseline)
    print(json.dumps({"bench": "coldstart-first-response", "layout": args.layout, "runs": args.runs,
                      "baseline": args.baseline,
                      "functions": functions, "target_ratio": TARGET_RATIO,
                      "ok": all("wall" in f and f["wall"]["ratio"] <= TARGET_RATIO for f in functions.values()),
                      "load_average_before": before, "load_average_after": load_average(), "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
