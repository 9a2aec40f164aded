"""What a container's first OAuth access token adds to its cold start: importing the verifier (PyJWT and
`cryptography`, which the API-key path never loads; what that path imports is loaded before the clock starts)
and verifying the first token (the RS256 key parsed from its JWK, the signature and the claims checked). The
issuer's round trips (discovery, JWKS) are left out: they are the network to your identity provider, once per
container and per key rotation. Fresh interpreters, medians.

    python -m bench.coldstart.token_path [--runs 21]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = """
import json, sys, time
jwks, token = json.loads(sys.argv[1]), sys.argv[2]
import agentkb.config, agentkb.errors, agentkb.models.domain, agentkb.services.access.credentials  # the key path's
t0, c0 = time.perf_counter(), time.process_time()
from agentkb.services.identity.jwks import JwksCache
from agentkb.services.identity.verifier import TokenVerifier
t1, c1 = time.perf_counter(), time.process_time()
fetch = lambda url: {"issuer": "https://idp.example", "jwks_uri": "https://idp.example/keys"} \\
    if url.endswith("openid-configuration") else jwks
principal = TokenVerifier("https://idp.example", "agentkb", keys=JwksCache("https://idp.example", fetch)).verify(token)
t2, c2 = time.perf_counter(), time.process_time()
assert principal.id == "alice"
print(t1 - t0, t2 - t1, c1 - c0, c2 - c1)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    from agentkb.services.identity.signing import KeyRing

    ring = KeyRing("https://idp.example", "agentkb")
    token = ring.mint("alice", ["api:read"], ["demo"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)])}
    samples = []
    for _ in range(args.runs):
        done = subprocess.run([sys.executable, "-c", SNIPPET, json.dumps(ring.jwks()), token], env=env,
                              capture_output=True, text=True, check=True)
        samples.append([float(v) for v in done.stdout.split()])
    import_wall, verify_wall, import_cpu, verify_cpu = (statistics.median(c) for c in zip(*samples, strict=True))
    print(json.dumps({"bench": "coldstart-token-path", "runs": args.runs, "python": sys.version.split()[0],
                      "import_ms": {"wall": round(import_wall * 1000, 1), "cpu": round(import_cpu * 1000, 1)},
                      "first_verify_ms": {"wall": round(verify_wall * 1000, 1), "cpu": round(verify_cpu * 1000, 1)},
                      "load_average": os.getloadavg(), "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
