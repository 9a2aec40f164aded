"""The API-key path never loads the JOSE stack: PyJWT and `cryptography` are imported when a bearer token
arrives, even with an issuer configured (a fresh interpreter, so nothing else has imported them before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentkb.services.identity.dev_issuer import DevIssuer

SCRIPT = """
import json, sys
from agentkb.composition import get_ports
from testkit.corpus import invoke, mint
from agentkb.local.events import rest_event
key = mint(get_ports(), ["ws"], ["api:read"], "keyholder")
status = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": "ws"}, key=key))["statusCode"]
before = sorted(m for m in ("jwt", "cryptography") if m in sys.modules)
token = sys.argv[1]
bearer = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": "ws"},
                                     headers={"Authorization": "Bearer " + token}))["statusCode"]
after = sorted(m for m in ("jwt", "cryptography") if m in sys.modules)
print(json.dumps([status, before, bearer, after]))
"""


def test_jwt_is_imported_only_when_a_token_arrives(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    with DevIssuer() as issuer:
        env = {**os.environ, "AGENTKB_DATA_DIR": str(tmp_path / "data"), "AGENTKB_BACKEND": "embedded",
               "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true",
               "AGENTKB_OIDC_ISSUER": issuer.issuer, "AGENTKB_OIDC_AUDIENCE": issuer.audience,
               "PYTHONPATH": os.pathsep.join([str(root / "functions"), str(root)])}
        token = issuer.mint("alice", ["api:read"], ["ws"])
        done = subprocess.run([sys.executable, "-c", SCRIPT, token], env=env, capture_output=True, text=True,
                              timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    status, before, bearer, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert (status, before) == (200, [])
    assert (bearer, after) == (200, ["cryptography", "jwt"])
