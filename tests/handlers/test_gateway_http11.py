"""The local gateway speaks HTTP/1.1 as clients do: chunked bodies (limit enforced while reading), malformed framing,
405 with Allow, 431 in the envelope, and a client that leaves mid-request leaves no traceback. Real sockets on
loopback, raw where the framing is the point."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.config import MAX_BODY_BYTES
from tests.reliability.make_events import RECALL


@pytest.fixture()
def gateway(bundle: Ports, rw_key: str) -> Iterator[tuple[str, int, str]]:
    from agentkb.local.server import make_server

    server = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "127.0.0.1", server.server_port, rw_key
    finally:
        server.shutdown()
        server.server_close()


def _raw(gateway: tuple[str, int, str], data: bytes, *, half_close: bool = False) -> tuple[int, dict[str, str], Any]:
    """Send `data` as is and read one response."""
    host, port, _ = gateway
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        response = http.client.HTTPResponse(sock, method=data.split(b" ", 1)[0].decode())
        response.begin()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(body or b"null")


def _head(gateway: tuple[str, int, str], method: str, path: str, extra: str = "") -> bytes:
    host, port, key = gateway
    return (f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nX-API-Key: {key}\r\n"
            f"Content-Type: application/json\r\n{extra}").encode()


def _recall_body() -> bytes:
    return json.dumps({**RECALL, "workspace_id": "ws1"}).encode()


def test_a_chunked_body_is_read_with_extensions_and_trailers(gateway: tuple[str, int, str]) -> None:
    body = _recall_body()
    half = len(body) // 2
    chunks = (f"{half:x};name=value\r\n".encode() + body[:half] + b"\r\n"
              + f"{len(body) - half:X}\r\n".encode() + body[half:] + b"\r\n"
              + b"0\r\nX-Trailer: yes\r\n\r\n")
    status, _, out = _raw(gateway, _head(gateway, "POST", "/v1/recall", "Transfer-Encoding: chunked\r\n\r\n")
                          + chunks)
    assert status == 200, out
    assert "results" in out


def test_http_client_streams_a_chunked_body(gateway: tuple[str, int, str]) -> None:
    host, port, key = gateway
    connection = http.client.HTTPConnection(host, port, timeout=30)
    body = _recall_body()
    connection.request("POST", "/v1/recall", body=iter([body[:10], body[10:]]), encode_chunked=True,
                       headers={"X-API-Key": key, "Content-Type": "application/json",
                                "Transfer-Encoding": "chunked"})
    response = connection.getresponse()
    assert response.status == 200, response.read()
    connection.close()


def test_a_chunked_body_over_the_limit_is_refused_before_the_rest_is_sent(gateway: tuple[str, int, str]) -> None:
    # Given chunks adding up to more than 2 MiB, and no final chunk ever sent
    piece = b"x" * (64 * 1024)
    count = MAX_BODY_BYTES // len(piece) + 1
    framed = b"".join(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" for _ in range(count))
    status, headers, out = _raw(gateway, _head(gateway, "POST", "/v1/recall", "Transfer-Encoding: chunked\r\n\r\n")
                                + framed)
    # Then the 413 arrives without the body's end, in the envelope, after the key was checked
    assert status == 413 and out["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert headers["x-ratelimit-limit"] and headers["connection"] == "close"


def test_a_chunk_declaring_more_than_the_limit_is_refused_at_its_size_line(gateway: tuple[str, int, str]) -> None:
    status, _, out = _raw(gateway, _head(gateway, "POST", "/v1/recall", "Transfer-Encoding: chunked\r\n\r\n")
                          + f"{MAX_BODY_BYTES + 1:x}\r\n".encode())
    assert status == 413 and out["error"]["code"] == "PAYLOAD_TOO_LARGE"


@pytest.mark.parametrize(("extra", "framed"), [
    ("Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n"),  # not a hex size
    ("Transfer-Encoding: chunked\r\n", b"2\r\n{}XX0\r\n\r\n"),  # data not followed by CRLF
    ("Transfer-Encoding: chunked\r\n", b"-2\r\n{}\r\n0\r\n\r\n"),
    ("Transfer-Encoding: chunked\r\n", b"1" * 5000 + b"\r\n"),  # an endless size line
    ("Transfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n"),
    ("Transfer-Encoding: chunked\r\nContent-Length: 2\r\n", b"0\r\n\r\n"),  # smuggling's shape
    ("Content-Length: abc\r\n", b"{}"),
    ("Content-Length: 2\r\nContent-Length: 3\r\n", b"{}"),
])
def test_malformed_framing_is_a_400_in_the_envelope(gateway: tuple[str, int, str], extra: str,
                                                    framed: bytes) -> None:
    status, headers, out = _raw(gateway, _head(gateway, "POST", "/v1/recall", extra + "\r\n") + framed)
    assert status == 400 and out["error"]["code"] == "BAD_REQUEST", out
    assert "framing" in out["error"]["message"] and headers["connection"] == "close"


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "OPTIONS", "GET", "HEAD"])
def test_a_known_path_with_another_method_is_405_with_allow(gateway: tuple[str, int, str], method: str) -> None:
    status, headers, out = _raw(gateway, _head(gateway, method, "/v1/recall", "Content-Length: 0\r\n\r\n"))
    assert status == 405 and headers["allow"] == "POST"
    if method != "HEAD":
        assert out["error"]["code"] == "METHOD_NOT_ALLOWED" and out["error"]["details"] == {"allowed": ["POST"]}


def test_allow_names_every_method_of_a_path_and_unknown_paths_stay_404(gateway: tuple[str, int, str]) -> None:
    status, headers, _ = _raw(gateway, _head(gateway, "PUT", "/v1/memories/7", "Content-Length: 0\r\n\r\n"))
    assert status == 405 and headers["allow"] == "DELETE, GET"
    status, _, out = _raw(gateway, _head(gateway, "PUT", "/v1/nothing-here", "Content-Length: 0\r\n\r\n"))
    assert status == 404 and out["error"]["code"] == "NOT_FOUND"


def test_a_too_large_header_is_431_in_the_envelope(gateway: tuple[str, int, str]) -> None:
    status, headers, out = _raw(gateway, _head(gateway, "GET", "/health", f"X-Big: {'a' * 65536}\r\n\r\n"))
    assert status == 431 and headers["content-type"] == "application/json"
    assert out["error"]["code"] == "REQUEST_HEADER_FIELDS_TOO_LARGE"


def test_a_too_long_request_line_is_414_in_the_envelope(gateway: tuple[str, int, str]) -> None:
    status, _, out = _raw(gateway, f"GET /{'a' * 70000} HTTP/1.1\r\n\r\n".encode())
    assert status == 414 and out["error"]["code"] == "REQUEST_URI_TOO_LONG"


def test_a_client_leaving_mid_request_or_mid_response_leaves_no_traceback(
        gateway: tuple[str, int, str], capfd: pytest.CaptureFixture[str]) -> None:
    host, port, _ = gateway
    # Mid-request: a declared body that never comes, then a chunked one cut inside a chunk
    for extra, sent in (("Content-Length: 500\r\n\r\n", b'{"a":'), ("Transfer-Encoding: chunked\r\n\r\n", b"10\r\nab")):
        with socket.create_connection((host, port), timeout=30) as sock:
            sock.sendall(_head(gateway, "POST", "/v1/recall", extra) + sent)
    # Mid-response: the client resets the connection before reading a large answer
    for _ in range(3):
        sock = socket.create_connection((host, port), timeout=30)
        sock.sendall(_head(gateway, "GET", "/openapi.json", "\r\n"))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # close = RST
        sock.close()
    time.sleep(1.0)
    assert _raw(gateway, _head(gateway, "GET", "/health", "\r\n"))[0] == 200  # still serving
    err = capfd.readouterr().err
    assert "Traceback" not in err, err
    assert "client disconnected" in err
