"""`agentkb search` asks a running `agentkb serve` first (no model load in the CLI), and searches its own engine
when nothing answers or the server does not know the key; a `--url` named on the command line is strict."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentkb
from agentkb.cli.main import main

FUNCTIONS = Path(agentkb.__file__).resolve().parents[1]
SEARCH = ["search", "when are refunds paid", "--workspace", "w", "--kb", "docs", "--top-k", "3", "--json"]
# the CLI in a fresh process: its results on stdout, then whether it imported the model's runtime
PROBE = ("import json, sys\nfrom agentkb.cli.main import main\ncode = main(sys.argv[1:])\n"
         "print(json.dumps({'code': code, 'model': 'onnxruntime' in sys.modules}), file=sys.stderr)")


@pytest.fixture()
def served(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[dict[str, str]]:
    from agentkb.local.server import make_server

    main(["kb", "create", "--workspace", "w", "--name", "docs"])
    (tmp_path / "refunds.md").write_text("Refunds are paid within five working days.", encoding="utf-8")
    (tmp_path / "rota.md").write_text("The on-call rota changes every Monday.", encoding="utf-8")
    main(["ingest", "--workspace", "w", "--kb", "docs", "--quiet", str(tmp_path)])
    main(["keys", "create", "--workspace", "w", "--scope", "api:read", "--json"])
    key = json.loads(capsys.readouterr().out.splitlines()[-1])["key"]
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_port}", "key": key, "data_dir": str(data_dir)}
    finally:
        server.shutdown()
        server.server_close()


def local_answer(capsys: pytest.CaptureFixture[str]) -> Any:
    assert main([*SEARCH, "--local"]) == 0
    return json.loads(capsys.readouterr().out)


def said(captured: Any) -> str:
    """What the CLI wrote on stderr (the in-process server logs its requests there too)."""
    return "".join(f"{line}\n" for line in captured.err.splitlines() if line.startswith(("note:", "error:")))


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_search_asks_the_running_server_and_never_loads_the_model(served: dict[str, str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "AGENTKB_DATA_DIR": served["data_dir"], "AGENTKB_BACKEND": "embedded",
           "AGENTKB_URL": served["url"], "AGENTKB_KEY": served["key"], "PYTHONPATH": str(FUNCTIONS)}
    done = subprocess.run([sys.executable, "-c", PROBE, *SEARCH], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert json.loads(done.stderr.splitlines()[-1]) == {"code": 0, "model": False}, done.stderr
    answer = json.loads(done.stdout)
    assert answer["data"]["results"][0]["documentName"] == "refunds.md"
    assert answer == local_answer(capsys)  # the same answer the engine gives in-process


def test_nothing_listening_means_the_local_engine(served: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AGENTKB_URL", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("AGENTKB_KEY", served["key"])
    assert main(SEARCH) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out) == local_answer(capsys)


def test_a_server_that_does_not_know_the_key_means_the_local_engine(served: dict[str, str],
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AGENTKB_URL", served["url"])
    assert main([*SEARCH, "--key", "akb_unknown_key"]) == 0  # as a server of another data directory answers
    captured = capsys.readouterr()
    assert said(captured) == (f"note: the API at {served['url']} answered 401: Authentication required; searched"
                              " the local engine\n")
    assert json.loads(captured.out) == local_answer(capsys)


def test_a_named_url_is_the_only_place_asked(served: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SEARCH, "--url", served["url"], "--key", served["key"]]) == 0
    assert json.loads(capsys.readouterr().out) == local_answer(capsys)
    nowhere = f"http://127.0.0.1:{closed_port()}"
    assert main([*SEARCH, "--url", nowhere, "--key", served["key"]]) == 2
    assert said(capsys.readouterr()) == f"error: no agentkb API answers at {nowhere}\n"
    assert main([*SEARCH, "--url", served["url"], "--key", "akb_unknown_key"]) == 2
    assert said(capsys.readouterr()) == f"error: the API at {served['url']} answered 401: Authentication required\n"
    assert main([*SEARCH, "--url", served["url"], "--key", served["key"], "--kb", "nope"]) == 2
    assert said(capsys.readouterr()) == (f"error: the API at {served['url']} answered 404: no knowledge base 'nope'"
                                       " in workspace 'w'\n")


def test_another_service_on_the_address_means_the_local_engine(served: dict[str, str],
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Other(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"status": "something else"}')

        def log_message(self, *args: Any) -> None:
            return None

    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{other.server_port}"
    try:
        monkeypatch.setenv("AGENTKB_URL", url)
        assert main([*SEARCH, "--key", served["key"]]) == 0
        assert json.loads(capsys.readouterr().out) == local_answer(capsys)
        assert main([*SEARCH, "--url", url, "--key", served["key"]]) == 2
        assert said(capsys.readouterr()) == f"error: the API at {url} answered 200: not a knowledge-base list\n"
    finally:
        other.shutdown()
        other.server_close()
