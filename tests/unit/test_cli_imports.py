"""What a CLI command on the embedded engine pays for: opening the database creates every table without importing
Powertools' idempotency utility or boto3 (only a claim needs them), and the embedding cache stores float32 vectors
bit for bit without numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.embedding_cache import SqliteEmbeddingCache

PROBE = """
import sys
from agentkb.cli.main import main
main(["keys", "list", "--data-dir", sys.argv[1]])
heavy = sorted(m for m in ("boto3", "botocore", "aws_lambda_powertools.utilities.idempotency") if m in sys.modules)
print("HEAVY", heavy)
"""


def test_a_cli_command_on_the_embedded_engine_imports_no_aws_sdk(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "data")], capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "AGENTKB_BACKEND": "embedded",
                                            "PYTHONPATH": ":".join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout, done.stdout
    assert list((tmp_path / "data").rglob("*.sqlite3")), "the command opened (and so created) the database"


def test_cached_vectors_round_trip_bit_for_bit(data_dir: Path) -> None:
    cache = SqliteEmbeddingCache(Database(data_dir / "cache.sqlite3"))
    vector = np.random.default_rng(7).standard_normal(384).astype(np.float32)
    cache.put_many("profile", {"a": vector, "b": [0.1, -2.5, 3e-8]})
    got = cache.get_many("profile", ["a", "b", "missing"])
    assert set(got) == {"a", "b"}
    assert np.asarray(got["a"], dtype=np.float32).tobytes() == vector.tobytes()
    assert got["b"] == np.asarray([0.1, -2.5, 3e-8], dtype=np.float32).tolist()
    assert cache.get_many("other-profile", ["a"]) == {}
