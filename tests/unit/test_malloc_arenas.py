"""`agentkb serve` caps glibc's malloc arenas (local/malloc_arenas.py; measured in bench/load/memory_steps.py)."""

from __future__ import annotations

import platform

import pytest

from agentkb.local.malloc_arenas import cap_malloc_arenas


def test_zero_keeps_glibcs_default() -> None:
    assert cap_malloc_arenas(0) is False


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt(M_ARENA_MAX) is glibc's")
def test_glibc_takes_the_cap() -> None:
    assert cap_malloc_arenas(2) is True


def test_serve_caps_the_arenas_before_it_starts_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.local import server

    calls: list[tuple[str, int]] = []

    def fake_cap(arenas: int) -> bool:
        calls.append(("cap", arenas))
        raise SystemExit  # stop serve() right there: nothing after the cap may have run yet

    monkeypatch.setattr(server, "cap_malloc_arenas", fake_cap)
    monkeypatch.setattr(server, "make_server", lambda *a: calls.append(("server", 0)))
    with pytest.raises(SystemExit):
        server.serve("127.0.0.1", 0, warm=True, malloc_arenas=3)
    assert calls == [("cap", 3)]
