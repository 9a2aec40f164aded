"""The local API gateway: HTTP requests -> API Gateway REST v1 proxy events -> the same Lambda handlers."""

from __future__ import annotations

import base64
import json
import socket
import sys
import threading
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentkb.api.functions import APPS
from agentkb.api.routes_table import match_route
from agentkb.config import Settings, get_settings
from agentkb.console.static import console_oidc, with_console
from agentkb.errors import BadRequest, DomainError
from agentkb.local.http_body import Framing, TooLarge, declared_length, is_chunked, read_chunked, read_exact
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
            except ModuleNotFoundError:  # an installed package has no functions/<fn>/: the app, as that handler
                app = APPS[function]()  # would wrap it (search serves the console: functions/search/handler.py)
                _handlers[function] = with_console(app) if function == "search" else app
        return _handlers[function]


DRAIN_LIMIT = 10 * 1024 * 1024  # API Gateway's own payload ceiling; larger bodies are cut off unread
LINGER_S = 2.0  # after a refused body: time for the client to read the answer before the socket closes
# Errors the standard library answers before a request reaches `_serve` (its HTML page otherwise): safe messages,
# never the stdlib's, which quote the request line back.
PROTOCOL_ERRORS = {400: "Malformed HTTP request", 414: "The request line is too long",
                   431: "A request header line is too long (64 KiB) or there are too many (100)",
                   505: "HTTP version not supported"}


class GatewayHandler(BaseHTTPRequestHandler):
    server_version = "agentkb-local"
    protocol_version = "HTTP/1.1"
    # Headers and body are written separately: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per response.
    disable_nagle_algorithm = True
    path = ""  # until a request line is parsed (a 414 has none)

    def _serve(self) -> None:
        try:
            body, headers = self._read_body()
        except Framing as exc:
            self.close_connection = self.unread = True
            self._send_error(BadRequest(f"Malformed request body framing: {exc}"))
            self._linger()
            return
        event = to_rest_event(self.command, self.path, headers, body, self.client_address[0])
        self.request_id = event["requestContext"]["requestId"]  # the access line names it: logs correlate
        response = dispatch(event)
        out_headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            out_headers[name] = values[-1]
        raw = response.get("body") or ""
        payload = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode("utf-8")
        self._send(int(response["statusCode"]), out_headers, payload)
        if self.unread:
            self._linger()

    def _read_body(self) -> tuple[bytes, dict[str, str]]:
        """The body and the headers the event carries: a chunked body arrives de-chunked with its length, as API
        Gateway sends it. An oversized body is not kept: the event declares its length and the handlers answer
        413 from it (after the key), and the connection closes."""
        headers = {k: v for k, v in self.headers.items() if k.lower() != "transfer-encoding"}
        limit = get_settings().max_body_bytes
        if is_chunked(self.headers):
            try:
                body = read_chunked(self.rfile, limit)
            except TooLarge as exc:
                self.close_connection = self.unread = True
                return b"", {**headers, "Content-Length": str(exc.received)}
            return body, {**headers, "Content-Length": str(len(body))}
        length = declared_length(self.headers)
        if length > limit:
            self._discard(length)
            self.close_connection, self.unread = True, length > DRAIN_LIMIT  # past the drain: bytes remain
            return b"", headers
        return (read_exact(self.rfile, length) if length else b""), headers

    def _discard(self, length: int) -> None:
        """Drain (never keep) an oversized body so the client sees the 413 instead of a reset connection."""
        remaining = min(length, DRAIN_LIMIT)
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 16))
            if not chunk:
                break
            remaining -= len(chunk)

    def _linger(self) -> None:
        """Closing with unread request bytes resets the connection, and a reset can destroy the answer before
        the client reads it: stop sending, then discard what still arrives for a moment (a lingering close)."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(LINGER_S)
            self._discard(DRAIN_LIMIT)
        except OSError:
            pass  # the client is gone already: nothing left to protect

    def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, str(value))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _send_error(self, error: DomainError) -> None:
        payload = json.dumps(error.envelope(), separators=(",", ":")).encode()
        self._send(error.http_status, {"Content-Type": "application/json", **error.headers}, payload)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (431, 414, a malformed request line) in the error envelope."""
        self.close_connection = True
        error = BadRequest(PROTOCOL_ERRORS[400]) if code == 400 else DomainError(
            PROTOCOL_ERRORS.get(code, HTTPStatus(code).phrase))
        if code != 400:
            error.code, error.http_status = HTTPStatus(code).name, code
        self._send_error(error)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def __getattr__(self, name: str) -> Any:
        """Any other method (HEAD, OPTIONS, TRACE, QUERY, ...) reaches the handlers too: a JSON 405 or 404, never
        HTML."""
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    request_id = "-"
    unread = False  # request bytes may remain unread: the connection closes with a lingering close

    def handle_one_request(self) -> None:
        self.request_id = "-"  # a keep-alive connection's next request refused before dispatch has none
        self.unread = False
        try:
            super().handle_one_request()
        except ConnectionError as exc:  # the client left mid-request or mid-response: nobody to answer
            self.close_connection = True
            sys.stderr.write(f"{self.address_string()} {self.command or '-'} {self.path.split('?')[0] or '-'} "
                             f"client disconnected ({type(exc).__name__}) {self.request_id}\n")

    def log_message(self, fmt: str, *args: Any) -> None:
        """One access line per request on stderr, with the correlation id its log lines carry."""
        status = args[1] if len(args) > 1 else ""
        sys.stderr.write(f"{self.address_string()} {self.command} {self.path.split('?')[0]} {status} "
                         f"{self.request_id}\n")


def make_server(host: str, port: int) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), GatewayHandler)
    server.daemon_threads = True
    return server


def console_sign_in(settings: Settings) -> str:
    """How the console's sign-in page offers itself: an API key, and the issuer when one is configured for it."""
    oidc = console_oidc(settings)
    return "sign in with an API key" if oidc is None else f"sign in with an API key or with {oidc['name']}"


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
    print(f"console: http://{host}:{server.server_port}/console/ ({console_sign_in(get_settings())})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
