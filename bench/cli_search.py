"""How long one `agentkb search` takes from the shell, with and without a running `agentkb serve` (issue 22).

    python bench/cli_search.py [--compare /path/to/other/checkout] [--runs 5]

Seeds a temp data dir with `agentkb demo`, starts `agentkb serve` on it (local_server.demo_server), then times
`python -m agentkb.cli.main search --workspace demo --kb handbook "How do I reset my password?"` end to end (process
start to exit), `--runs` times per case: this tree and `--compare`'s, each with AGENTKB_URL pointing at the server
and at a closed port (nothing listening: the CLI searches its own engine). The key is the data dir's dev key, as
after `make run`. Prints one JSON line per case: median, min and max wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from local_server import ROOT, demo_server  # noqa: E402

QUERY = ["search", "--workspace", "demo", "--kb", "handbook", "How do I reset my password?"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def time_case(tree: Path, data_dir: Path, url: str, runs: int) -> dict[str, Any]:
    env = {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "AGENTKB_URL": url, "PYTHONPATH": str(tree / "functions"),
           "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}
    env.pop("AGENTKB_KEY", None)
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "agentkb.cli.main", *QUERY], env=env, capture_output=True,
                              text=True, timeout=300, check=False)
        walls.append(time.perf_counter() - start)
        if done.returncode != 0 or "password-reset.md" not in done.stdout:
            raise RuntimeError(f"search failed in {tree}: {done.stderr[-1000:]}")
    return {"median_s": round(statistics.median(walls), 2), "min_s": round(min(walls), 2),
            "max_s": round(max(walls), 2), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", type=Path, help="another checkout to time the same way (e.g. main)")
    parser.add_argument("--runs", type=int, default=5, help="searches per case")
    args = parser.parse_args()
    trees = [("compare", args.compare.resolve())] if args.compare else []
    trees.append(("this", ROOT))
    with demo_server() as server:
        for label, tree in trees:
            for case, url in (("server running", server["base"]), ("nothing listening",
                                                                     f"http://127.0.0.1:{closed_port()}")):
                timing = time_case(tree, server["data_dir"], url, args.runs)
                print(json.dumps({"tree": label, "path": str(tree), "case": case, **timing,
                                  "load": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    main()
