"""How the agentkb CLI talks to people: help that shows defaults, one-line errors, quiet closed pipes, asking first.

- Every error is one line on stderr, `error: ...`, and a non-zero exit: argparse's usage errors, a request model's
  pydantic ValidationError (turned into the option it came from: `error: --top-k must be at most 100`), a
  DomainError's message, a bad configuration (named by its AGENTKB_ variable).
- A reader that goes away (`agentkb docs list | head -1`) ends the command quietly with 141, the status of a
  process that SIGPIPE ended, as `ls | head` does; SIGPIPE itself stays ignored (Python's default), so a server
  never dies of a client that hung up.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from pydantic import ValidationError

SIGPIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader went away


class CliError(Exception):
    """A one-line refusal of the CLI itself (exit 2): the message is printed after `error: `."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; each option's help ends with its default when it has a meaningful one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if "%(default)" in text or "(default" in text or action.required or default in (None, False, [], ()) \
                or default is argparse.SUPPRESS or not (action.option_strings or action.nargs in ("?", "*")):
            return text
        return f"{text} (default: %(default)s)"


class CliParser(argparse.ArgumentParser):
    """Every parser and subparser of the CLI (add_subparsers builds its own class): shared help and errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("formatter_class") in (None, argparse.HelpFormatter, argparse.RawDescriptionHelpFormatter):
            kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


_TEMPLATES = {
    "less_than_equal": "must be at most {le}", "less_than": "must be less than {lt}",
    "greater_than_equal": "must be at least {ge}", "greater_than": "must be greater than {gt}",
    "string_too_long": "must be at most {max_length} characters",
    "string_too_short": "must be at least {min_length} characters", "too_long": "takes at most {max_length} values",
    "too_short": "needs at least {min_length} values", "literal_error": "must be {expected}", "missing": "is required",
    "extra_forbidden": "is not accepted",
}


def validation_message(exc: ValidationError, names: Mapping[str, str]) -> str:
    """The first issue of a ValidationError as one line naming the option it came from (`names`: field -> option).

    Each branch of a union reports its own type mismatch; any other issue says more, so it comes first."""
    issues = exc.errors(include_url=False)
    issue = next((i for i in issues if not i["type"].endswith("_type")), issues[0])
    loc = [str(part) for part in issue["loc"]]
    where = names.get(loc[0], ".".join(loc)) if loc else "input"  # an option holds its whole field
    ctx = issue.get("ctx") or {}
    if issue["type"] == "string_too_short" and ctx.get("min_length") == 1:
        text = "must not be empty"
    elif issue["type"] in _TEMPLATES:
        text = _TEMPLATES[issue["type"]].format(**ctx)
    else:
        text = issue["msg"][:1].lower() + issue["msg"][1:]
    return one_line(f"{where} {text}")


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def quiet_closed_stdout() -> int:
    """After a BrokenPipeError: point stdout at /dev/null (so the exit flush cannot raise again) and say 141."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a replaced stdout (tests) has no file descriptor
        pass
    return SIGPIPE_EXIT


def confirm(question: Callable[[], str], yes: bool, what: str) -> None:
    """Go on when --yes was given or a person at a terminal says y; otherwise refuse with a CliError."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise CliError(f"{what} needs --yes when stdin is not a terminal")
    print(f"{question()} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise CliError("nothing deleted")
