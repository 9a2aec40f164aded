"""`agentkb serve`, instrumented: one JSON line per request saying whether it reached service logic.

    python -m bench.fuzz.server REACH_LOG serve --data-dir DIR --port 0

"Reached" is measured, not guessed from status codes: a request reached service logic when, while the gateway
handled it, a function of an `agentkb.services` module was entered (so the gate - size, key, rate limit, scope,
media type, strict JSON - and the resolver's request validation let it through) AND no workspace check refused the
key (`Principal.can_reach` answered False: the 404 of a workspace the key cannot reach). Every function defined in
agentkb.services.* is wrapped before the API modules import them, so routes added later are counted too.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import pkgutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_state = threading.local()


def _mark(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def marked(*args: Any, **kwargs: Any) -> Any:
        _state.reached = True
        return fn(*args, **kwargs)

    return marked


def instrument_services() -> int:
    """Wrap every function defined in agentkb.services.*; returns how many."""
    import agentkb.services as services

    count = 0
    for info in pkgutil.walk_packages(services.__path__, prefix="agentkb.services."):
        module = importlib.import_module(info.name)
        for name, value in list(vars(module).items()):
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                setattr(module, name, _mark(value))
                count += 1
    return count


def instrument_scope_check() -> None:
    from agentkb.models.domain import Principal

    reach = Principal.can_reach

    def can_reach(self: Any, workspace_id: str) -> bool:
        allowed = reach(self, workspace_id)
        if not allowed:
            _state.denied = True
        return allowed

    Principal.can_reach = can_reach  # type: ignore[method-assign]


def instrument_gateway(log_path: Path) -> None:
    from agentkb.api.routes_table import match_route
    from agentkb.local import server

    dispatch = server.dispatch
    lock = threading.Lock()
    out = log_path.open("a", buffering=1)

    def counted(event: dict[str, Any]) -> dict[str, Any]:
        _state.reached, _state.denied = False, False
        response = dispatch(event)
        found = match_route(event["httpMethod"], event["path"])
        line = {"route": f"{found[0].method} {found[0].path}" if found else "(unknown route)",
                "status": int(response["statusCode"]), "reached": bool(_state.reached and not _state.denied),
                "serviceEntered": bool(_state.reached), "scopeDenied": bool(_state.denied)}
        with lock:
            out.write(json.dumps(line) + "\n")
        return response

    server.dispatch = counted  # type: ignore[assignment]


def main() -> int:
    log_path, argv = Path(sys.argv[1]), sys.argv[2:]
    wrapped = instrument_services()
    instrument_scope_check()
    instrument_gateway(log_path)
    print(f"fuzz_server: {wrapped} service functions instrumented", file=sys.stderr, flush=True)
    from agentkb.cli.main import main as cli

    return cli(argv)


if __name__ == "__main__":
    raise SystemExit(main())
