"""The pure pieces of `agentkb mcp`: schema shaping, argument filling, key selection, HTTP mapping, renderings,
and the client configuration `make run` prints (launched for real through the SDK's stdio client)."""

from __future__ import annotations

import io
import json
import sys
import urllib.error
from email.message import Message
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from agentkb.local.demo import _print_mcp
from agentkb.mcp.backends import HttpApi
from agentkb.mcp.calls import ApiRequest
from agentkb.mcp.render import error, recall
from agentkb.mcp.schemas import fill_defaults
from agentkb.mcp.server import presented_key
from agentkb.mcp.tools import BY_NAME, CREATE_SNAPSHOT, LIST_KNOWLEDGE_BASES, RECALL
from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import structured, subprocess_env


def test_fill_defaults_merges_nested_objects_and_given_values_win() -> None:
    defaults = {"scope": {"visibility": "workspace", "include_stale": False}, "task_type": "general"}
    given = {"scope": {"include_stale": True}, "query": "q"}
    assert fill_defaults(given, defaults) == {"scope": {"include_stale": True, "visibility": "workspace"},
                                              "query": "q", "task_type": "general"}
    assert fill_defaults({"scope": "oops"}, defaults)["scope"] == "oops"  # left for the API to reject
    assert given == {"scope": {"include_stale": True}, "query": "q"}  # the caller's arguments are not mutated


def test_requests_fill_the_implied_workspace_only_where_absent() -> None:
    recall_body = RECALL.request({"query": "q", "workspace_id": "mine"}, "implied").body
    assert recall_body is not None and recall_body["workspace_id"] == "mine"
    assert recall_body["limits"] == {"max_items": 10, "max_tokens": 2000}
    snap = CREATE_SNAPSHOT.request({"scope": {"maxClassification": "internal"}}, "ws").body
    assert snap is not None and snap["scope"]["workspaceId"] == "ws" and len(snap["runId"]) == 36
    listing = LIST_KNOWLEDGE_BASES.request({"limit": 5}, "ws")
    assert (listing.method, listing.query, listing.body) == ("GET", {"limit": "5", "workspaceId": "ws"}, None)
    no_workspace = BY_NAME["search_graph"].request({"query": "x"}, None).body
    assert no_workspace == {"query": "x"}


def test_every_schema_property_keeps_the_models_limits() -> None:
    schema = BY_NAME["write_memory"].input_schema()
    assert schema["properties"]["body"]["maxLength"] == 65536
    assert schema["properties"]["visibility"]["default"] == "workspace" and "visibility" not in schema["required"]
    assert schema["properties"]["relations"]["items"]["properties"]["weight"]["maximum"] == 1
    assert set(schema["required"]) == {"type", "name", "body"}


def context(headers: dict[str, str] | None) -> Any:
    return SimpleNamespace(request=None if headers is None else SimpleNamespace(headers=headers))


def test_over_http_the_key_is_the_clients_never_the_servers() -> None:
    assert presented_key(context(None), "server-key") == "server-key"  # stdio
    assert presented_key(context({"x-api-key": "k1"}), "server-key") == "k1"
    assert presented_key(context({"authorization": "Bearer k2"}), "server-key") == "k2"
    assert presented_key(context({"authorization": "Basic abc"}), "server-key") is None
    assert presented_key(context({}), "server-key") is None


class Answer(io.BytesIO):
    def __init__(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        super().__init__(body)
        self.status, self.headers = status, headers


def test_http_api_maps_statuses_bodies_and_headers() -> None:
    sent: list[Any] = []

    def ok(request: Any, timeout: float) -> Answer:
        sent.append(request)
        return Answer(200, b'{"data": []}', {"X-RateLimit-Limit": "600"})

    answer = HttpApi("https://kb.example.com/prod/", opener=ok).call(
        ApiRequest("GET", "/api/v2/knowledge/bases", {"workspaceId": "w s"}, None), "akb_k")
    assert (answer.status, answer.body, answer.headers) == (200, {"data": []}, {"x-ratelimit-limit": "600"})
    assert sent[0].full_url == "https://kb.example.com/prod/api/v2/knowledge/bases?workspaceId=w+s"
    assert sent[0].get_header("X-api-key") == "akb_k"

    def gateway_error(request: Any, timeout: float) -> Answer:
        headers = Message()
        headers["Retry-After"] = "3"
        raise urllib.error.HTTPError(request.full_url, 502, "Bad Gateway", headers, io.BytesIO(b"<html>"))

    failed = HttpApi("http://127.0.0.1:1", opener=gateway_error).call(ApiRequest("POST", "/v1/recall", None, {}), None)
    assert failed.status == 502 and failed.body["error"]["code"] == "INTERNAL_ERROR"
    assert failed.headers["retry-after"] == "3"
    with pytest.raises(ValueError, match="http:// or https://"):
        HttpApi("kb.example.com")


def test_renderings_of_errors_and_degraded_recall() -> None:
    assert error(502, "<html>", {}) == 'HTTP 502: "<html>"'
    forbidden = {"error": {"code": "FORBIDDEN", "message": "Missing scope", "details": {"code": "INSUFFICIENT_SCOPE"}}}
    assert error(403, forbidden, {}) == 'FORBIDDEN (403): Missing scope {"code": "INSUFFICIENT_SCOPE"}'
    degraded = recall({"query": "q", "direct_matches": [], "graph_matches": [], "vec_degraded": True,
                       "vec_degraded_code": "timeout"})
    assert degraded.splitlines() == ["0 direct and 0 graph matches for 'q'",
                                     "Vector leg degraded (timeout): lexical matches only."]


def test_the_printed_client_configuration_starts_a_working_server(seeded: Seeded, capsys: pytest.CaptureFixture[str]
                                                                  ) -> None:
    from agentkb.composition import get_ports

    _print_mcp(get_ports(), seeded.key)
    out = capsys.readouterr().out
    assert f"claude mcp add agentkb --env AGENTKB_KEY={seeded.key} -- " in out
    entry = json.loads(out[out.index("{"):out.rindex("}") + 1])["mcpServers"]["agentkb"]
    assert entry["args"] == ["mcp", "--data-dir", str(seeded.data_dir.resolve())]
    # The same args and env, launched with this interpreter on this source tree (the .venv script is main's).
    env = {**subprocess_env(seeded.data_dir), **entry["env"]}
    env.pop("AGENTKB_DATA_DIR")  # the configuration alone must name the data directory
    params = StdioServerParameters(command=sys.executable, args=["-m", "agentkb.cli.main", *entry["args"]], env=env)

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=120) as client:
            return await client.call_tool("list_knowledge_bases", {})

    assert structured(anyio.run(main))["data"][0]["id"] == seeded.kb


def test_the_http_door_listens_before_it_announces_its_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that connects as soon as it reads the address waits in the backlog, never meets a refusal."""
    import socket

    import anyio
    import uvicorn

    from agentkb.mcp.cli import serve_http
    from agentkb.mcp.server import ToolRunner

    connected: list[bool] = []
    wire = io.StringIO()

    async def serve_later(self: uvicorn.Server, sockets: list[socket.socket]) -> None:
        # uvicorn has not started yet: the address is already printed, so a connect must already succeed
        port = int(wire.getvalue().rsplit(":", 1)[1].split("/")[0])
        assert port == sockets[0].getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            connected.append(True)

    monkeypatch.setattr(uvicorn.Server, "serve", serve_later)
    anyio.run(serve_http, ToolRunner(api=None), "127.0.0.1", 0, wire)  # type: ignore[arg-type]
    assert connected == [True]
