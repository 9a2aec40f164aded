"""The network of a cold-start measurement, stubbed in-process below urllib3.

urllib3's `HTTPConnection.connect` (and its HTTPS subclass, which botocore's connections extend) is replaced by
one that hands the connection one end of a local socket pair instead of a TCP + TLS connection. Everything above
the socket runs as in Lambda: botocore's request building and signing, http.client's request writing and
response parsing, urllib3's pooling. When a whole request has arrived, a *responder* writes the answer into the
other end: the canned responses of a recording (`Replay`), or, while recording, a live fake (bench/coldstart/record.py).

Requests are matched by `request_key` (method, host, path, X-Amz-Target and the DynamoDB tables named), and among
those preferably by the same body; each recorded answer is used once, so a missing or extra call fails loudly.
No TLS handshake is made: the floor process pays the same (none), so the ratio is unaffected.
Only the standard library is imported here until `install()`, which imports urllib3 (boto3 imports it anyway).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    host: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


Responder = Callable[[Request], Answer]
REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 404: "Not Found", 500: "Server Error"}


def request_key(method: str, host: str, path: str, headers: dict[str, str], body: bytes) -> str:
    target = headers.get("x-amz-target", "")
    tables = ""
    if target.startswith("DynamoDB") and body:
        payload = json.loads(body)
        named = [payload.get("TableName", "")] + sorted(payload.get("RequestItems", {}))
        for item in payload.get("TransactItems", []):
            named += [op.get("TableName", "") for op in item.values()]
        tables = ",".join(sorted({n for n in named if n}))
    return f"{method} {host}{path.split('?', 1)[0]} {target} {tables}"


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


class Replay:
    """Answers each request with an unused recorded answer of the same key (same body first)."""

    def __init__(self, exchanges: list[dict[str, Any]]) -> None:
        self.unused = list(exchanges)
        self.used: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Answer:
        key = request_key(request.method, request.host, request.path, request.headers, request.body)
        digest = body_digest(request.body)
        with self.lock:
            chosen = self._pick([e for e in self.unused if e["key"] == key], digest)
            if chosen is not None:
                self.unused.remove(chosen)
                self.used.append(chosen)
            else:  # the same read once more than recorded (parallel legs racing to a cache): the same answer
                chosen = self._pick([e for e in self.used if e["key"] == key and e["digest"] == digest], digest)
            if chosen is None:
                raise RuntimeError(f"no recorded answer for {key}")
        return Answer(chosen["status"], chosen["headers"], base64.b64decode(chosen["body"]))

    @staticmethod
    def _pick(candidates: list[dict[str, Any]], digest: str) -> dict[str, Any] | None:
        return next((e for e in candidates if e["digest"] == digest), candidates[0] if candidates else None)


def exchange_record(request: Request, answer: Answer) -> dict[str, Any]:
    return {"key": request_key(request.method, request.host, request.path, request.headers, request.body),
            "digest": body_digest(request.body), "status": answer.status, "headers": answer.headers,
            "body": base64.b64encode(answer.body).decode()}


class _Wire:
    """The client end of a socket pair; parses what is sent and writes the responder's answer back."""

    def __init__(self, responder: Responder) -> None:
        self.client, self.server = socket.socketpair()
        self.responder = responder
        self.pending = b""

    def __getattr__(self, name: str) -> Any:  # fileno, makefile, settimeout, close, ...: the real socket's
        return getattr(self.client, name)

    def sendall(self, data: bytes) -> None:
        self.pending += bytes(data)
        self._answer_if_complete()

    def send(self, data: bytes) -> int:
        self.sendall(data)
        return len(data)

    def _answer_if_complete(self) -> None:
        head, sep, body = self.pending.partition(b"\r\n\r\n")
        if not sep:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        if len(body) < length:
            if headers.get("expect", "").lower() == "100-continue" and not body:
                self.server.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            return
        self.pending = body[length:]
        answer = self.responder(Request(method, headers.get("host", ""), path, headers, body[:length]))
        lines = [f"HTTP/1.1 {answer.status} {REASONS.get(answer.status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in answer.headers.items() if k.lower() not in ("content-length",
                                                                                        "transfer-encoding")]
        lines.append(f"Content-Length: {len(answer.body)}")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + answer.body
        # A writer thread: an answer larger than the socket buffer would block a write from this thread.
        threading.Thread(target=self.server.sendall, args=(raw,), daemon=True).start()


def install(responder: Responder) -> None:
    """Every urllib3 connection made from now on talks to `responder` instead of the network."""
    from urllib3 import connection

    def connect(self: Any) -> None:
        self.sock = _Wire(responder)
        self.is_verified = True  # no TLS to verify; keeps urllib3 from warning about an unverified request

    connection.HTTPConnection.connect = connect  # type: ignore[method-assign]
    connection.HTTPSConnection.connect = connect  # type: ignore[method-assign]


def install_replay(recording: dict[str, Any]) -> None:
    install(Replay(recording["exchanges"]))
