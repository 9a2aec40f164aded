"""`agentkb auth dev-issuer` in its own process on loopback and `agentkb auth token` against it: the token it
prints verifies against the issuer's published keys, carries the sub, scopes and workspaces asked for, and the
issuer leaves no state file behind when stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import agentkb
from agentkb.cli.main import main
from agentkb.services.identity.verifier import TokenVerifier

FUNCTIONS = Path(agentkb.__file__).resolve().parents[1]


def test_dev_issuer_and_token_print_a_verifiable_token(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FUNCTIONS), str(FUNCTIONS.parent)])}
    issuer = subprocess.Popen([sys.executable, "-m", "agentkb.cli.main", "auth", "dev-issuer", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert issuer.stdout is not None
        first = issuer.stdout.readline()
        url = first.split(" on ", 1)[1].split(" ", 1)[0]
        assert url.startswith("http://127.0.0.1:"), first
        for _ in range(3):  # the exports and the token endpoint line
            issuer.stdout.readline()
        state = data_dir / "dev-issuer.json"
        assert state.stat().st_mode & 0o777 == 0o600
        assert main(["auth", "token", "--sub", "alice", "--scope", "api:read", "--workspace", "demo"]) == 0
        token = capsys.readouterr().out.strip()
        principal = TokenVerifier(url, "agentkb").verify(token)
        assert (principal.id, principal.scopes, principal.workspaces) == ("alice", ("api:read",), ("demo",))
    finally:
        issuer.send_signal(signal.SIGTERM)
        issuer.wait(timeout=30)
    assert not state.exists()


def test_token_without_a_running_issuer_is_one_clear_line(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["auth", "token", "--sub", "alice", "--scope", "api:read"]) == 2
    assert "no dev issuer is running" in capsys.readouterr().err
