"""`agentkb auth`: try OAuth access tokens locally.

  agentkb auth dev-issuer [--port 8790]      a loopback OIDC issuer (discovery, JWKS, client-credentials token
                                             endpoint) until Ctrl-C; prints the AGENTKB_OIDC_* settings to use
  agentkb auth token --sub alice --scope api:read --workspace demo
                                             asks that issuer's token endpoint and prints the access token

The running issuer's address and client secret are kept in <data dir>/dev-issuer.json (mode 0600) for
`auth token`, and removed when it stops. Its keys live in memory only: restarting it invalidates every token.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from agentkb.cli.io import CliError

if TYPE_CHECKING:
    from agentkb.composition import Ports

STATE_FILE = "dev-issuer.json"


def register(sub: Any) -> None:
    auth = sub.add_parser("auth", help="OAuth access tokens: a local dev issuer and its tokens",
                          description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = auth.add_subparsers(dest="auth_command", required=True)
    issuer = commands.add_parser("dev-issuer", help="run a loopback OIDC issuer (Ctrl-C stops it)")
    issuer.add_argument("--data-dir", type=Path, help="data directory (default .agentkb/ or AGENTKB_DATA_DIR)")
    issuer.add_argument("--host", default="127.0.0.1", choices=["127.0.0.1", "::1"], help="loopback address")
    issuer.add_argument("--port", type=int, default=8790, help="port (0 = any free port)")
    issuer.add_argument("--audience", default="agentkb", help="the tokens' aud (AGENTKB_OIDC_AUDIENCE)")
    issuer.add_argument("--alg", default="RS256", choices=["RS256", "ES256"], help="signing algorithm")
    issuer.set_defaults(func=run_dev_issuer)
    token = commands.add_parser("token", help="print an access token from the running dev issuer")
    token.add_argument("--data-dir", type=Path, help="data directory (default .agentkb/ or AGENTKB_DATA_DIR)")
    token.add_argument("--sub", required=True, help="who the token speaks for (its sub: the principal)")
    token.add_argument("--scope", action="append", required=True, help="api:read, api:write (repeatable)")
    token.add_argument("--workspace", action="append", default=[], help="a workspace it reaches (repeatable)")
    token.add_argument("--json", action="store_true", help="print the token endpoint's whole JSON answer")
    token.set_defaults(func=run_token)


def _state_path(ports: Ports) -> Path:
    return Path(ports.settings.data_dir) / STATE_FILE


def run_dev_issuer(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.services.identity.dev_issuer import DevIssuer

    issuer = DevIssuer(args.host, args.port, audience=args.audience, alg=args.alg)
    state = _state_path(ports)
    state.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(state, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump({"issuer": issuer.issuer, "client_secret": issuer.client_secret, "audience": issuer.audience},
                  handle)
    print(f"agentkb dev issuer on {issuer.issuer} (loopback only; Ctrl-C stops it). Serve the API with:")
    print(f"  export AGENTKB_OIDC_ISSUER={issuer.issuer}")
    print(f"  export AGENTKB_OIDC_AUDIENCE={issuer.audience}")
    print(f"Token endpoint: {issuer.issuer}/token (client_credentials; any client_id, the secret in {state})",
          flush=True)
    signal.signal(signal.SIGTERM, _stop)  # a stopped issuer leaves no state file behind, Ctrl-C or kill alike
    try:
        issuer.serve_forever()
    finally:
        state.unlink(missing_ok=True)
    return 0


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _read_state(ports: Ports) -> dict[str, str]:
    path = _state_path(ports)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CliError(f"no dev issuer is running for {ports.settings.data_dir} (start `agentkb auth dev-issuer`)"
                       ) from exc
    return {k: str(v) for k, v in state.items()}


def run_token(args: argparse.Namespace, ports: Ports) -> int:
    state = _read_state(ports)
    form = urlencode([("grant_type", "client_credentials"), ("scope", " ".join(args.scope))]
                     + [("workspace", w) for w in args.workspace]).encode()
    credentials = f"{quote(args.sub, safe='')}:{quote(state['client_secret'], safe='')}"  # RFC 6749 §2.3.1
    basic = base64.b64encode(credentials.encode()).decode()
    request = urllib.request.Request(state["issuer"] + "/token", data=form, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded", "Authorization": f"Basic {basic}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (the loopback dev issuer)
            answer = json.loads(response.read())
    except urllib.error.HTTPError as err:
        raise CliError(f"the dev issuer refused: {err.read().decode('utf-8', 'replace')}") from err
    except (urllib.error.URLError, OSError) as exc:
        raise CliError(f"the dev issuer at {state['issuer']} is not answering ({type(exc).__name__})") from exc
    print(json.dumps(answer) if args.json else answer["access_token"])
    sys.stdout.flush()
    return 0
