"""`agentkb serve` on a free loopback port with a temp data dir seeded by `agentkb demo` (bench.fuzz.run,
bench.load.serve, bench.ingest.concurrency)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the repository: where `python -m bench...` runs


def _env(data_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_LOG_LEVEL": "WARNING",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), os.environ.get("PYTHONPATH", "")]), **extra}


@contextmanager
def demo_server(extra_env: dict[str, str] | None = None, access_log: Path | None = None,
                serve_cli: list[str] | None = None, serve_args: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Yields {base, host, port, key, kb, data_dir}; the server and its temp dir are gone afterwards.

    access_log: where the gateway's stderr (one `<ip> <METHOD> <path> <status>` line per request) goes.
    serve_cli: the command that takes the CLI's arguments for `serve` (default: the agentkb CLI itself); it runs in
    the repository root, so it may be a module of the bench package (`python -m bench.fuzz.server LOG`).
    serve_args: more options of `serve` (`--malloc-arenas 0`)."""
    with tempfile.TemporaryDirectory(prefix="agentkb-bench-") as tmp:
        data_dir = Path(tmp) / "data"
        env = _env(data_dir, extra_env or {})
        cli = [sys.executable, "-m", "agentkb.cli.main"]
        demo = subprocess.run([*cli, "demo", "--data-dir", str(data_dir)], env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        if demo.returncode != 0:
            raise RuntimeError(f"agentkb demo failed: {demo.stderr[-2000:]}")
        kb = subprocess.run([*cli, "kb", "list", "--workspace", "demo", "--data-dir", str(data_dir)], env=env,
                            capture_output=True, text=True, timeout=120, check=True).stdout.split("\t")[0].strip()
        log = access_log.open("w") if access_log else subprocess.DEVNULL
        out_path = Path(tmp) / "server.out"  # a file, not a pipe: an unread pipe would fill and stall the server
        out = out_path.open("w")
        proc = subprocess.Popen([*(serve_cli or cli), "serve", "--data-dir", str(data_dir), "--host", "127.0.0.1",
                                 "--port", "0", *serve_args],
                                env=env, stdout=out, stderr=log, text=True, cwd=ROOT)
        try:
            found = None
            deadline = time.monotonic() + 120
            while found is None and time.monotonic() < deadline and proc.poll() is None:
                found = re.search(r"http://127\.0\.0\.1:(\d+)", out_path.read_text())
                time.sleep(0.05)
            if not found:
                raise RuntimeError(f"agentkb serve did not start: {out_path.read_text()[-2000:]!r}")
            port = int(found.group(1))
            yield {"base": f"http://127.0.0.1:{port}", "host": "127.0.0.1", "port": port, "kb": kb,
                   "key": (data_dir / "dev-key").read_text().strip(), "data_dir": data_dir, "pid": proc.pid,
                   "server_output": out_path}
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            out.close()
            if access_log:
                log.close()  # type: ignore[union-attr]
