"""Requests resolve concurrently (issue 16): the resolvers keep request state per thread (api/resolver_state.py),
so a request held inside its route still sees its own event and routing context after another thread resolved a
different request on the same resolver, and the threaded local gateway answers a second request while the first
is still inside its handler (no process-wide resolve lock)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from agentkb.api.resolver_state import HttpResolver, RestResolver
from agentkb.api.route import Routes, build_resolver
from agentkb.composition import Ports
from tests.helpers import rest_event
from tests.reliability.make_events import RECALL


def _resolver(cls: type[Any]) -> tuple[Any, threading.Event, threading.Event]:
    """A resolver with one route that, for the body {"hold": true}, waits inside the route until released and then
    answers with what the resolver (as Powertools' middlewares and response builder read it) says the request is."""
    routes, app = Routes(), []
    entered, release = threading.Event(), threading.Event()

    @routes.public("POST", "/echo", "echo", summary="Echo")
    def echo() -> dict[str, Any]:
        if app[0].current_event.json_body.get("hold"):
            entered.set()
            assert release.wait(30)
        return {"body": app[0].current_event.json_body, "route": app[0].context.get("_route") is not None}

    app.append(build_resolver(cls, [routes]))
    return app[0], entered, release


def _held_and_other(cls: type[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    app, entered, release = _resolver(cls)
    held: dict[str, Any] = {}
    first = threading.Thread(target=lambda: held.update(app.resolve(rest_event("POST", "/echo", {"hold": True}),
                                                                    None)))
    first.start()
    assert entered.wait(30)  # the first request is inside its route
    other = app.resolve(rest_event("POST", "/echo", {"hold": False, "n": 2}), None)  # resolved meanwhile
    release.set()
    first.join(30)
    return json.loads(held["body"]), json.loads(other["body"])


def test_a_held_request_keeps_its_own_event_and_routing_context() -> None:
    held, other = _held_and_other(RestResolver)
    assert held == {"body": {"hold": True}, "route": True}
    assert other == {"body": {"hold": False, "n": 2}, "route": True}


def test_plain_powertools_resolvers_share_the_request_between_threads() -> None:
    # Why the per-thread resolvers exist: on the stock resolver the held request reads the other one's body.
    held, _ = _held_and_other(APIGatewayRestResolver)
    assert held["body"] == {"hold": False, "n": 2}


def test_the_http_v2_resolver_keeps_state_per_thread_too() -> None:
    app, _, _ = _resolver(HttpResolver)
    seen: dict[str, Any] = {}

    def other_thread() -> None:
        seen["event"] = getattr(app._request, "current_event", None)
        seen["context"] = dict(app.context)

    app.current_event = "mine"
    app.context["k"] = 1
    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join(30)
    assert seen == {"event": None, "context": {}}
    assert (app.current_event, app.context) == ("mine", {"k": 1})


@pytest.mark.parametrize("cls", [RestResolver, HttpResolver])
def test_the_middleware_frames_are_per_thread(cls: type[Any]) -> None:
    app, _, _ = _resolver(cls)
    app.processed_stack_frames.append("frame")
    frames: list[Any] = []
    worker = threading.Thread(target=lambda: frames.append(list(app.processed_stack_frames)))
    worker.start()
    worker.join(30)
    assert frames == [[]] and app.processed_stack_frames == ["frame"]


class GatedEmbedder:
    """The real embedder, except that a memory whose text starts with "held" waits inside embed_documents (inside
    its request's handler) until released."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.entered, self.release = threading.Event(), threading.Event()

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed_query(text))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if any(text.startswith("held") for text in texts):
            self.entered.set()
            assert self.release.wait(60)
        return list(self.inner.embed_documents(texts))


def _post(base: str, path: str, key: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"X-API-Key": key, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _memory(name: str) -> dict[str, Any]:
    return {"workspace_id": "ws1", "visibility": "workspace", "type": "note", "name": name,
            "body": f"{name}: the deploy window is Friday."}


def test_the_gateway_resolves_a_second_request_while_the_first_is_inside_its_handler(
        bundle: Ports, rw_key: str, override_ports: Any) -> None:
    from agentkb.local.server import make_server

    # Given the threaded local gateway, and a memory write held inside its handler (in its embedding)
    gated = GatedEmbedder(bundle.embedder)
    override_ports(embedder=gated)
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    held: dict[str, Any] = {}
    held_done, other_done = threading.Event(), threading.Event()
    others: list[tuple[int, Any]] = []

    def write_held() -> None:
        held["answer"] = _post(base, "/v1/memories", rw_key, _memory("held"))
        held_done.set()

    def write_others() -> None:  # the same function, then another function
        others.append(_post(base, "/v1/memories", rw_key, _memory("second")))
        others.append(_post(base, "/v1/recall", rw_key, {**RECALL, "workspace_id": "ws1"}))
        other_done.set()

    try:
        threading.Thread(target=write_held, daemon=True).start()
        assert gated.entered.wait(60)
        # When other requests arrive meanwhile, Then they are answered while the first is still inside its handler
        threading.Thread(target=write_others, daemon=True).start()
        assert other_done.wait(120), "a request waited for another request's handler"
        assert not held_done.is_set()
        assert [status for status, _ in others] == [201, 200], others
        assert others[0][1]["name"] == "second"
        # And the held request, released, answers with its own body
        gated.release.set()
        assert held_done.wait(120)
        status, body = held["answer"]
        assert status == 201 and body["name"] == "held", body
    finally:
        gated.release.set()
        server.shutdown()
        server.server_close()


def test_no_route_reads_the_request_from_its_module_level_router() -> None:
    # The resolvers include copies of the routers; a route reading `router.current_event` on its module-level
    # Router would read Powertools' class attribute, shared by every thread. Routes take typed parameters instead.
    from pathlib import Path

    import agentkb.api

    readers = [p.name for p in Path(agentkb.api.__file__).parent.rglob("*.py")
               if p.name != "resolver_state.py" and "current_event" in p.read_text()]
    assert readers == []
