"""Cold start to first response: a fresh process on the AWS backend answers its first search, recall and
snapshot request, against a floor process (Powertools' event handler, pydantic, boto3, the same clients, a
trivial route), with the network stubbed below urllib3 (bench/coldstart/net.py). Used by
`python -m bench.coldstart.run --first-response`.

Each function process gets the stack's own environment (bench/coldstart/env.py: infra's function_environment plus
what Lambda sets with Tracing.ACTIVE), imports its handler from the built bundle, and answers the function's
recorded API Gateway event with the recorded answers of every AWS and OpenSearch call (bench/coldstart/record.py);
it must answer with the recorded status (the number of answers it used is reported: parallel legs may race
to a cache and make one call more or less than the recording). The floor process runs in the same
environment and layout, creates boto3 clients for the same AWS services through one session (as
adapters/aws/dynamodb/tables.py does) and a urllib3 pool for OpenSearch, and answers the same event from a
one-route `APIGatewayRestResolver(enable_validation=True)` with a pydantic body. Runs are interleaved:
floor, traced, untraced, next function, ... so load drift hits every variant alike.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.coldstart.baseline import bench_module, net_module
from bench.coldstart.env import lambda_runtime_environment

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ("search", "recall", "snapshot")
OK = {"search": 200, "recall": 200, "snapshot": 201}

# Both snippets load the stub and the recording before the clock starts (the runtime has its event in memory). The
# stub is loaded from its file: the measured process has the bundle's path only (no repository, no bench package).
PRELUDE = """
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("coldstart_net", {net!r})
net = sys.modules["coldstart_net"] = importlib.util.module_from_spec(spec); spec.loader.exec_module(net)
recording = json.load(open({recording!r}))
event, exchanges = recording["events"][{name!r}], recording["exchanges"][{name!r}]
class Context:
    function_name, function_version, memory_limit_in_mb = "agentkb-{name}", "$LATEST", 1024
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:agentkb-{name}"
    aws_request_id = "c0ffee00-0000-4000-8000-000000000000"
    def get_remaining_time_in_millis(self): return 30000
"""
HANDLER = PRELUDE + """
t0, c0 = time.perf_counter(), time.process_time()
replay = net.Replay(exchanges)
net.install(replay)
import {name}.handler
t1, c1 = time.perf_counter(), time.process_time()
answer = {name}.handler.lambda_handler(event, Context())
t2, c2 = time.perf_counter(), time.process_time()
assert answer["statusCode"] == {status}, answer
print(t1 - t0, t2 - t0, c1 - c0, c2 - c0, len(exchanges) - len(replay.unused))
"""
FLOOR = PRELUDE + """
t0, c0 = time.perf_counter(), time.process_time()
net.install(net.Replay([]))
import boto3, urllib3
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from botocore.config import Config
from pydantic import BaseModel, ConfigDict
session = boto3.session.Session()
config = Config(read_timeout=10, connect_timeout=3, retries={{"max_attempts": 3, "mode": "standard"}})
clients = [session.client(s, region_name="eu-west-1", config=config) for s in {services!r}]
credentials = session.get_credentials().get_frozen_credentials()
pool = urllib3.PoolManager(maxsize=16, retries=False)
class Body(BaseModel):
    model_config = ConfigDict(extra="allow")
app = APIGatewayRestResolver(enable_validation=True)
@app.post(event["path"])
def route(body: Body) -> dict:
    return {{"ok": True}}
t1, c1 = time.perf_counter(), time.process_time()
answer = app.resolve(event, Context())
t2, c2 = time.perf_counter(), time.process_time()
assert answer["statusCode"] == 200, answer
print(t1 - t0, t2 - t0, c1 - c0, c2 - c0)
"""


def record(path: Path) -> None:
    """The recording (made once per bench run, in the dev environment: moto and the OpenSearch fake)."""
    done = subprocess.run([sys.executable, *bench_module(ROOT, "record"), str(path)], capture_output=True, text=True,
                          cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"recording failed:\n{done.stderr[-3000:]}")


def services(exchanges: list[dict[str, Any]]) -> list[str]:
    """The boto3 services a function called (its OpenSearch calls go through the urllib3 pool instead)."""
    hosts = {e["key"].split(" ")[1].split(".")[0] for e in exchanges}
    return sorted(h for h in hosts if h in ("dynamodb", "secretsmanager", "bedrock-runtime",
                                            "bedrock-agent-runtime", "s3", "sqs"))


def environments(recording: dict[str, Any], name: str, base: dict[str, str]) -> dict[str, dict[str, str]]:
    env = {k: v for k, v in base.items() if not k.startswith(("AGENTKB_", "POWERTOOLS_", "AWS_"))}
    env.update({**recording["env"], **lambda_runtime_environment(name)})
    untraced = {**env, "POWERTOOLS_TRACE_DISABLED": "true"}
    return {"stack": env, "untraced": untraced}


def _run(code: str, env: dict[str, str], cwd: Path) -> list[float] | str:
    """The snippet's numbers, or the tail of its error (a failed run is counted and reported, not measured)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1][:300]
    return [float(v) for v in done.stdout.strip().splitlines()[-1].split()]


def measure(recording_path: Path, runs: int, base_env: dict[str, str], cwd: Path, *,
            rerecord: bool = False, progress: Path | None = None, baseline: Path | None = None) -> dict[str, Any]:
    """Median first-response times per function and variant; the recording is made when missing or asked for.
    `baseline`: a prepared tree of another revision (baseline.py), measured in the same rounds."""
    if rerecord or not recording_path.exists():
        record(recording_path)
    recording = json.loads(recording_path.read_text())
    base_recording = _baseline_recording(baseline)
    samples: dict[str, list[list[float]]] = {}
    plans = []
    for name in FUNCTIONS:
        args = {"net": str(net_module(ROOT)), "recording": str(recording_path), "name": name}
        envs = environments(recording, name, base_env)
        floor = FLOOR.format(**args, services=services(recording["exchanges"][name]))
        handler = HANDLER.format(**args, status=OK[name])
        plans += [(f"{name}/floor", floor, envs["stack"], cwd), (f"{name}/stack", handler, envs["stack"], cwd),
                  (f"{name}/untraced", handler, envs["untraced"], cwd)]
        if baseline is not None and base_recording is not None:
            plans.append(_baseline_plan(baseline, base_recording, name, base_env))
    failures: dict[str, list[str]] = {}
    for done_rounds in range(1, runs + 1):  # interleaved: every variant once per round
        for label, code, env, where in plans:
            result = _run(code, env, where)
            if isinstance(result, str):
                failures.setdefault(label, []).append(result)
            else:
                samples.setdefault(label, []).append(result)
        base = base_recording[1] if base_recording else None
        if progress is not None:  # a long run on a loaded machine leaves its figures so far
            progress.write_text(json.dumps({"rounds": done_rounds, **summarize(samples, recording, failures, base)}))
    return summarize(samples, recording, failures, base_recording[1] if base_recording else None)


def _baseline_recording(baseline: Path | None) -> tuple[Path, dict[str, Any]] | None:
    if baseline is None:
        return None
    from bench.coldstart.baseline import record as record_baseline

    path = record_baseline(baseline)
    return path, json.loads(path.read_text())


def _baseline_plan(tree: Path, recorded: tuple[Path, dict[str, Any]], name: str,
                   base_env: dict[str, str]) -> tuple[str, str, dict[str, str], Path]:
    """The baseline revision's bundle answering the same event, with the stack's settings (its own recording)."""
    from bench.coldstart.baseline import layout

    path, recording = recorded
    env, where = layout(tree, environments(recording, name, base_env)["stack"])
    code = HANDLER.format(net=str(net_module(tree)), recording=str(path), name=name, status=OK[name])
    return f"{name}/baseline", code, env, where


def summarize(samples: dict[str, list[list[float]]], recording: dict[str, Any],
              failures: dict[str, list[str]], baseline: dict[str, Any] | None = None) -> dict[str, Any]:
    def median_ms(label: str, column: int) -> float:
        return round(statistics.median(s[column] for s in samples[label]) * 1000, 1)

    out: dict[str, Any] = {}
    for name in FUNCTIONS:
        if not all(samples.get(f"{name}/{v}") for v in ("floor", "stack", "untraced")):
            out[name] = {"failed_runs": {k: v for k, v in failures.items() if k.startswith(f"{name}/")}}
            continue
        row: dict[str, Any] = {}
        for clock, column in (("wall", 1), ("cpu", 3)):  # CPU time: what a loaded shared machine inflates least
            floor = median_ms(f"{name}/floor", column)
            stack, untraced = median_ms(f"{name}/stack", column), median_ms(f"{name}/untraced", column)
            row[clock] = {"floor_ms": floor, "first_response_ms": stack, "untraced_ms": untraced,
                          "ratio": round(stack / floor, 3), "ratio_untraced": round(untraced / floor, 3),
                          "init_ms": median_ms(f"{name}/stack", column - 1),
                          "floor_init_ms": median_ms(f"{name}/floor", column - 1)}
            if samples.get(f"{name}/baseline"):
                base = median_ms(f"{name}/baseline", column)
                row[clock].update({"baseline_ms": base, "ratio_baseline": round(base / floor, 3)})
        out[name] = {**row, "aws_calls_recorded": len(recording["exchanges"][name]),
                     "aws_calls_made": sorted({int(s[4]) for s in samples[f"{name}/stack"]}),
                     "failed_runs": {k: v for k, v in failures.items() if k.startswith(f"{name}/")}}
        if baseline is not None and samples.get(f"{name}/baseline"):
            out[name].update({"baseline_aws_calls_recorded": len(baseline["exchanges"][name]),
                              "baseline_aws_calls_made": sorted({int(s[4]) for s in samples[f"{name}/baseline"]})})
    return out


def load_average() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]
