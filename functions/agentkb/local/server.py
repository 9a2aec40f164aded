"""The local API gateway: HTTP requests -> API Gateway REST v1 proxy events -> the same Lambda handlers."""

from __future__ import annotations

import base64
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentkb.api.functions import APPS
from agentkb.api.routes_table import match_route
from agentkb.config import get_settings
from agentkb.local.lambda_context import LocalLambdaContext
from agentkb.local.malloc_arenas import DEFAULT_ARENAS, cap_malloc_arenas


def to_rest_event(method: str, raw_path: str, headers: dict[str, str], body: bytes,
                  client_ip: str = "127.0.0.1") -> dict[str, Any]:
    """The event API Gateway (REST v1, Lambda proxy integration) would send for this request."""
    split = urlsplit(raw_path)
    query = parse_qs(split.query, keep_blank_values=True)
    found = match_route(method, split.path)
    resource = found[0].path if found else split.path
    try:
        text: str | None = body.decode("utf-8") if body else None
        is_b64 = False
    except UnicodeDecodeError:
        text, is_b64 = base64.b64encode(body).decode("ascii"), True
    return {
        "resource": resource, "path": split.path, "httpMethod": method,
        "headers": headers or None, "multiValueHeaders": {k: [v] for k, v in headers.items()} or None,
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": (found[1] or None) if found else None, "stageVariables": None,
        "requestContext": {"resourcePath": resource, "httpMethod": method, "path": split.path, "stage": "local",
                           "requestId": str(uuid.uuid4()), "identity": {"sourceIp": client_ip}},
        "body": text, "isBase64Encoded": is_b64,
    }


def dispatch(event: dict[str, Any]) -> dict[str, Any]:
    """Call the Lambda handler of the function that owns the route (search answers unknown routes)."""
    found = match_route(event["httpMethod"], event["path"])
    function = found[0].function if found else "search"
    context = LocalLambdaContext(function_name=f"agentkb-{function}")
    response: dict[str, Any] = _handler(function)(event, context)
    return response


_handlers: dict[str, Any] = {}
_handlers_lock = threading.Lock()


def _handler(function: str) -> Any:
    """The real `lambda_handler` of functions/<function>/handler.py when present, else the bare app."""
    with _handlers_lock:
        if function not in _handlers:
            functions_dir = str(Path(__file__).resolve().parents[2])  # functions/ holds <fn>/handler.py
            if (Path(functions_dir) / function / "handler.py").exists() and functions_dir not in sys.path:
                sys.path.append(functions_dir)
            try:
                import importlib

                _handlers[function] = importlib.import_module(f"{function}.handler").lambda_handler
            except ModuleNotFoundError:
                _handlers[function] = APPS[function]()
        return _handlers[function]


DRAIN_LIMIT = 10 * 1024 * 1024  # API Gateway's own payload ceiling; larger bodies are cut off unread


class GatewayHandler(BaseHTTPRequestHandler):
    server_version = "agentkb-local"
    protocol_version = "HTTP/1.1"
    # Headers and body are written separately: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per response.
    disable_nagle_algorithm = True

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        oversized = length > get_settings().max_body_bytes
        if oversized:  # drained unread; the handlers decide the 413 from the declared length (after the key)
            self._discard(length)
            self.close_connection = True
        body = self.rfile.read(length) if length and not oversized else b""
        headers = dict(self.headers.items())
        event = to_rest_event(self.command, self.path, headers, body, self.client_address[0])
        self.request_id = event["requestContext"]["requestId"]  # the access line names it: logs correlate
        response = dispatch(event)
        out_headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            out_headers[name] = values[-1]
        raw = response.get("body") or ""
        payload = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode("utf-8")
        self._send(int(response["statusCode"]), out_headers, payload)

    def _discard(self, length: int) -> None:
        """Drain (never keep) an oversized body so the client sees the 413 instead of a reset connection."""
        remaining = min(length, DRAIN_LIMIT)
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 16))
            if not chunk:
                break
            remaining -= len(chunk)

    def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, str(value))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def __getattr__(self, name: str) -> Any:
        """Any other method (HEAD, OPTIONS, TRACE, QUERY, ...) reaches the handlers too: a JSON 404, never HTML."""
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    request_id = "-"

    def handle_one_request(self) -> None:
        self.request_id = "-"  # a keep-alive connection's next request refused before dispatch has none
        super().handle_one_request()

    def log_message(self, fmt: str, *args: Any) -> None:
        """One access line per request on stderr, with the correlation id its log lines carry."""
        status = args[1] if len(args) > 1 else ""
        sys.stderr.write(f"{self.address_string()} {self.command} {self.path.split('?')[0]} {status} "
                         f"{self.request_id}\n")


def make_server(host: str, port: int) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), GatewayHandler)
    server.daemon_threads = True
    return server


def serve(host: str = "127.0.0.1", port: int = 8787, warm: bool = True,
          malloc_arenas: int = DEFAULT_ARENAS) -> None:
    """Serve until interrupted; warms the handlers and the model first so the first request is fast.

    malloc_arenas: glibc malloc arenas for the process (0: glibc's default), capped before any thread starts."""
    from agentkb.composition import get_ports

    cap_malloc_arenas(malloc_arenas)
    server = make_server(host, port)
    if warm:
        for function in ("search", "ingest", "recall", "snapshot"):
            _handler(function)
        get_ports().embedder.embed_query("warm up")
    if get_ports().engine.indexes_in_process:  # documents accepted with 202 (and any a killed server left queued)
        from agentkb.local.indexing_worker import start

        start(get_ports())
    print(f"agentkb serving on http://{host}:{server.server_port} (data: {get_settings().data_dir})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
