"""`agentkb mcp`: serve the MCP tools on stdio (the default) or streamable HTTP (`--http`).

`--data-dir` (or AGENTKB_DATA_DIR, or .agentkb/) serves the embedded engine in this process; `--url` calls a
running agentkb API. On stdio the key is AGENTKB_KEY; over HTTP each request brings its own key
(`X-API-Key` or `Authorization: Bearer`), so one server can serve several agents without sharing a key.
Only the protocol (stdio) or the announced address (HTTP) reaches stdout; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentkb.errors import DomainError

if TYPE_CHECKING:
    from agentkb.composition import Ports
    from agentkb.mcp.server import ToolRunner

STDIO_NEEDS_KEY = "AGENTKB_KEY is not set: export the API key the MCP server should present (agentkb keys create)"


def register(sub: Any) -> None:
    """Add `agentkb mcp` to the agentkb CLI's subparsers."""
    mcp = sub.add_parser("mcp", help="MCP server for agents (stdio; --http for streamable HTTP)",
                         description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mcp.add_argument("--data-dir", type=Path, help="data directory (default .agentkb/ or AGENTKB_DATA_DIR)")
    mcp.add_argument("--url", help="call a running agentkb API at this base URL instead of the local engine")
    mcp.add_argument("--workspace", help="workspace used when a tool call names none (default: the key's only one)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="--http bind address (default loopback)")
    mcp.add_argument("--port", type=int, default=8788, help="--http port (0 = any free port)")
    mcp.add_argument("--public-url", help="--http with an OAuth issuer: the URL clients reach /mcp at, named as the "
                     "protected resource (default: the bound address)")
    mcp.set_defaults(func=run)


def _workspaces_of(key: str) -> tuple[str, ...] | None:
    """The workspaces a key (or an access token of the configured issuer) reaches, read from the local key store
    (None for an unknown or revoked key, or a token that does not verify)."""
    from agentkb.composition import get_ports
    from agentkb.services.access.credentials import authenticate_request

    ports = get_ports()
    try:
        return authenticate_request(ports.keys, ports.secrets, ports.settings, None, f"Bearer {key}").workspaces
    except DomainError:
        return None


def build_runner(args: argparse.Namespace) -> ToolRunner:
    from agentkb.mcp.backends import HttpApi, InProcessApi
    from agentkb.mcp.server import ToolRunner

    if args.url:
        return ToolRunner(HttpApi(args.url), args.workspace)
    return ToolRunner(InProcessApi(), args.workspace, _workspaces_of)


def run(args: argparse.Namespace, ports: Ports) -> int:
    """Serve until stdin closes (stdio) or the process is stopped (HTTP). `ports` is unused: in-process calls go
    through the handlers, which take the process's bundle themselves."""
    from agentkb.config import client_api_key
    from agentkb.mcp.stdout import claim_stdout, quiet_metrics, text_wire

    # First, before a handler module (and Powertools) is imported or anything is printed.
    quiet_metrics()
    wire = claim_stdout()
    if args.url and args.data_dir:
        raise ValueError("--url and --data-dir are exclusive: serve a remote API or the local engine, not both")
    key = client_api_key()
    if not args.http and key is None:
        raise ValueError(STDIO_NEEDS_KEY)
    runner = build_runner(args)
    if not args.url and key is not None and _workspaces_of(key) is None and not args.http:
        raise ValueError("AGENTKB_KEY is not a valid key of this data directory (unknown or revoked)")
    import anyio

    if args.http:
        anyio.run(serve_http, runner, args.host, args.port, text_wire(wire), args.public_url)
    else:
        anyio.run(serve_stdio, runner, key, text_wire(wire))
    return 0


async def serve_stdio(runner: ToolRunner, key: str | None, wire: TextIO) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from agentkb.mcp.server import build_server

    server = build_server(runner, key)
    # The wire given explicitly: the SDK then leaves fd 1 alone (claim_stdout has moved it for good).
    async with stdio_server(stdout=anyio.wrap_file(wire)) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(runner: ToolRunner, host: str, port: int, wire: TextIO, public_url: str | None = None) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp (stateless, JSON responses); the bound address on `wire` (stdout)
    first, and nothing else. With AGENTKB_OIDC_ISSUER set it is an OAuth resource server (mcp/oauth.py)."""
    import uvicorn

    from agentkb.mcp.server import build_server

    app: Any = build_server(runner, None).streamable_http_app(host=host, stateless_http=True, json_response=True)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    app = _protected(app, public_url or f"http://{shown}:{bound}/mcp")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    # Listening before the address is announced: a client that reads it and connects while uvicorn is still starting
    # waits in the backlog, where a bound but not yet listening socket would refuse it.
    sock.listen(config.backlog)
    print(f"agentkb MCP (streamable HTTP) on http://{shown}:{bound}/mcp", file=wire, flush=True)
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()


def _protected(app: Any, resource: str) -> Any:
    """The app behind the OAuth resource-server door when an issuer is configured; else as it is."""
    from agentkb.config import get_settings

    settings = get_settings()
    if settings.oidc_issuer is None:
        return app
    from agentkb.mcp.oauth import ProtectedResource

    def verify(token: str) -> object:
        from agentkb.services.identity.verifier import verify_bearer

        return verify_bearer(token, settings)

    return ProtectedResource(app, resource, settings.oidc_issuer, verify)
