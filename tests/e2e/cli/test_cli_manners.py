"""The CLI people like (issue 22): one-line errors that name the option, quiet closed pipes, help with defaults."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agentkb
from agentkb.cli.main import build_parser, main

FUNCTIONS = Path(agentkb.__file__).resolve().parents[1]  # the code under test, in the subprocess too


def error_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own refusals
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


@pytest.mark.parametrize(("argv", "line"), [
    (["search", "q", "--workspace", "w", "--kb", "docs", "--top-k", "500"], "error: --top-k must be at most 100"),
    (["search", "q", "--workspace", "w", "--kb", "docs", "--top-k", "0"], "error: --top-k must be at least 1"),
    (["search", "x" * 40_000, "--workspace", "w", "--kb", "docs"], "error: QUERY must be at most 32768 characters"),
    (["search", "q", "--workspace", "", "--kb", "docs"], "error: --workspace must not be empty"),
    (["search", "q", "--workspace", "w", *["--kb", "docs"] * 21], "error: --kb takes at most 20 values"),
    (["kb", "create", "--workspace", "w", "--name", ""], "error: --name must not be empty"),
    (["kb", "show", "nope", "--workspace", "w"], "error: no knowledge base 'nope' in workspace 'w'"),
    (["kb", "list"], "error: the following arguments are required: --workspace (see agentkb kb list --help)"),
    (["search", "q", "--workspace", "w", "--kb", "docs", "--top-k", "many"],
     "error: argument --top-k: invalid int value: 'many' (see agentkb search --help)"),
])
def test_errors_are_one_line_naming_the_option(data_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                               line: str) -> None:
    code, err = error_of(capsys, *argv)
    assert (code, err) == (2, line + "\n")


def test_a_bad_configuration_is_one_line_naming_the_variable(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "0")
    code, err = error_of(capsys, "kb", "list", "--workspace", "w")
    assert (code, err) == (2, "error: invalid agentkb configuration: AGENTKB_RATE_LIMIT_PER_MINUTE must be at"
                              " least 1\n")


def _closed_pipe(argv: list[str], data_dir: Path) -> subprocess.CompletedProcess[bytes]:
    """The command with a stdout whose reader is gone before it writes (`agentkb ... | head -0`)."""
    env = {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "AGENTKB_BACKEND": "embedded",
           "POWERTOOLS_METRICS_DISABLED": "true", "PYTHONPATH": str(FUNCTIONS)}
    env.pop("AGENTKB_KEY", None)
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "agentkb.cli.main", *argv], stdout=write, stderr=subprocess.PIPE,
                              env=env, timeout=300, check=False)
    finally:
        os.close(write)


def test_a_closed_pipe_ends_every_listing_quietly(data_dir: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "create", "--workspace", "w", "--name", "docs"]) == 0
    (tmp_path / "a.md").write_text("Refunds are paid within five days.", encoding="utf-8")
    assert main(["ingest", "--workspace", "w", "--kb", "docs", "--quiet", str(tmp_path / "a.md")]) == 0
    assert main(["keys", "create", "--workspace", "w", "--scope", "api:read"]) == 0
    capsys.readouterr()
    for argv in (["kb", "list", "--workspace", "w"], ["docs", "list", "--workspace", "w", "--kb", "docs"],
                 ["keys", "list", "--json"], ["search", "refunds", "--workspace", "w", "--kb", "docs", "--local"]):
        done = _closed_pipe(argv, data_dir)
        assert (done.returncode, done.stderr.decode()) == (141, ""), argv


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _parsers(child)
    return found


def test_every_option_has_help_and_shows_its_default() -> None:
    for parser in _parsers(build_parser()):
        text = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            assert action.help, f"{parser.prog} {action.dest}: no help"
            if action.default in (None, False, [], argparse.SUPPRESS) or action.required:
                continue  # nothing to show (a required option's usage says so)
            written = "(default" in action.help  # said in words, e.g. "(default loopback)"
            assert written or f"(default: {action.default})" in " ".join(text.split()), f"{parser.prog} {action.dest}"
