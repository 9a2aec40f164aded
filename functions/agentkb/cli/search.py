"""`agentkb search`: through a running `agentkb serve` when one answers, else on the configured engine.

A server keeps the embedding model loaded, so asking it saves the model load (seconds) of every command. On the
embedded engine the CLI asks the configured address (AGENTKB_URL, default http://127.0.0.1:8787, `agentkb
serve`'s) with `--key`, AGENTKB_KEY or the data directory's dev key (`agentkb demo`); anything but an answer -
nothing listening (a 0.2 s connect timeout), a key that server does not know (another data directory), a
knowledge base it does not hold - means the CLI searches its own engine. A `--url` named on the command line is
the only place asked: its failures are errors. `--local` never asks a server.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkb.cli.io import CliError, one_line

if TYPE_CHECKING:
    from agentkb.composition import Ports
    from agentkb.models.search import KnowledgeSearchRequest

DEFAULT_URL = "http://127.0.0.1:8787"
CONNECT_S = {"default": 0.2, "named": 5.0}  # loopback answers or refuses at once; a named URL may be remote
READ_S = 60.0
FIELDS = {"workspaceId": "--workspace", "knowledgeBaseIds": "--kb", "query": "QUERY", "topK": "--top-k",
          "searchMode": "--mode"}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    search = sub.add_parser("search", parents=[common], help="search knowledge bases", description=__doc__)
    search.add_argument("query", metavar="QUERY", help="what to search for")
    search.add_argument("--workspace", required=True, help="workspace id")
    search.add_argument("--kb", required=True, action="append", help="knowledge base id or name (repeatable)")
    search.add_argument("--mode", choices=["hybrid", "vector"],
                        help="retrieval mode (default: the workspace's policy, hybrid unless set)")
    search.add_argument("--top-k", type=int, default=5, help="results to return, 1-100")
    search.add_argument("--json", action="store_true", help="print the API's response body")
    search.add_argument("--url", help=f"ask the agentkb API at this base URL, and only it (default: AGENTKB_URL or"
                                      f" {DEFAULT_URL} when it answers, else the local engine)")
    search.add_argument("--key", help="API key for the server (default: AGENTKB_KEY, else the data dir's dev-key)")
    search.add_argument("--local", action="store_true", help="search the configured engine, never a server")
    search.set_defaults(func=run, fields=FIELDS)


def run(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.models.search import KnowledgeSearchRequest

    # validated before anything is opened or asked (a ValidationError is reported as the option it names)
    request = KnowledgeSearchRequest(workspaceId=args.workspace, knowledgeBaseIds=list(args.kb), query=args.query,
                                     topK=args.top_k, searchMode=args.mode)
    answer = None if args.local else _ask_server(args, ports, request)
    data, degraded = answer if answer is not None else _search_here(ports, request)
    if args.json:
        print(json.dumps({"data": data}))
        return 0
    for r in data["results"]:
        snippet = " ".join(r["content"].split())[:160]
        print(f"{r['rank']}. {r['documentName']} #{r['chunkIndex']}  (score {r['rankScore']:.4f}, similarity"
              f" {r['similarity']:.3f})\n   {snippet}")
    if degraded:
        print(f"(degraded: {degraded})")
    return 0


def _search_here(ports: Ports, request: KnowledgeSearchRequest) -> tuple[dict[str, Any], str | None]:
    from agentkb.local.operator import OPERATOR, resolve_kb
    from agentkb.services.search.service import SearchDeps, search_knowledge

    ids = [resolve_kb(ports, request.workspaceId, ref).id for ref in request.kb_ids()]
    deps = SearchDeps(ports.catalog, ports.index, ports.embedder, ports.reranker, ports.settings.default_search_mode,
                      embedders=ports.embedders)
    outcome = search_knowledge(request.model_copy(update={"knowledgeBaseIds": ids}), OPERATOR, deps)
    return outcome.data.model_dump(mode="json"), outcome.degraded


def _ask_server(args: argparse.Namespace, ports: Ports,
                request: KnowledgeSearchRequest) -> tuple[dict[str, Any], str | None] | None:
    """The server's answer; None when the local engine should answer instead (never for a named --url)."""
    named = args.url is not None
    if not named and ports.settings.backend != "embedded":
        return None  # the configured engine is remote already: no model to save
    key = args.key or _configured_key(ports)
    if key is None:
        if named:
            raise CliError("--url needs an API key: --key or AGENTKB_KEY")
        return None
    from agentkb.config import client_api_url

    server = ApiClient(args.url or client_api_url() or DEFAULT_URL, key, CONNECT_S["named" if named else "default"])
    try:
        return server.search(request)
    except ApiRefusal as refusal:
        if named:
            raise CliError(str(refusal)) from None
        if refusal.status in (401, 403):
            print(f"note: {refusal}; searched the local engine", file=sys.stderr)
        return None


def _configured_key(ports: Ports) -> str | None:
    from agentkb.config import client_api_key

    key = client_api_key()
    dev_key = Path(ports.settings.data_dir) / "dev-key"  # what `agentkb demo` / `make run` keeps
    if key is None and ports.settings.backend == "embedded" and dev_key.is_file():
        key = dev_key.read_text(encoding="utf-8").strip() or None
    return key


class ApiRefusal(Exception):
    """The API did not answer the call (unreachable, or a non-2xx status), as one line."""

    def __init__(self, base_url: str, status: int | None, body: Any = None) -> None:
        self.status = status
        if status is None:
            text = f"no agentkb API answers at {base_url}"
        else:
            error = body.get("error") if isinstance(body, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            text = f"the API at {base_url} answered {status}" + (f": {one_line(message)}" if message else "")
        super().__init__(text)


class ApiClient:
    """A few JSON calls to an agentkb API with a short connect timeout (stdlib http.client: cheap to import)."""

    def __init__(self, base_url: str, key: str, connect_s: float) -> None:
        from urllib.parse import urlsplit

        if not base_url.startswith(("http://", "https://")):
            raise CliError(f"--url must start with http:// or https:// (got {base_url!r})")
        self.base_url = base_url.rstrip("/")
        self.parts = urlsplit(self.base_url)
        self.key, self.connect_s = key, connect_s

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], Any]:
        import http.client

        https = self.parts.scheme == "https"
        connection_class = http.client.HTTPSConnection if https else http.client.HTTPConnection
        connection = connection_class(self.parts.hostname or "", self.parts.port, timeout=self.connect_s)
        headers = {"X-API-Key": self.key, "Accept": "application/json"}
        data = None if body is None else json.dumps(body).encode("utf-8")
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            connection.connect()
            if connection.sock is not None:
                connection.sock.settimeout(READ_S)  # a search may take a while; connecting may not
            connection.request(method, self.parts.path + path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            raise ApiRefusal(self.base_url, None) from None
        finally:
            connection.close()
        try:
            decoded = json.loads(raw) if raw else None
        except ValueError:
            raise ApiRefusal(self.base_url, response.status) from None
        return response.status, {k.lower(): v for k, v in response.getheaders()}, decoded

    def search(self, request: KnowledgeSearchRequest) -> tuple[dict[str, Any], str | None]:
        """The search's data, in the form the local path prints, and its degradation (X-Search-Degraded)."""
        from pydantic import ValidationError

        from agentkb.models.search import KnowledgeSearchData

        ids = self.knowledge_base_ids(request.workspaceId, request.kb_ids())
        body = request.model_copy(update={"knowledgeBaseIds": ids}).model_dump(mode="json", exclude_none=True)
        status, headers, answer = self.call("POST", "/api/v2/knowledge/search", body)
        if status != 200:
            raise ApiRefusal(self.base_url, status, answer)
        try:
            data = KnowledgeSearchData.model_validate(answer["data"]).model_dump(mode="json")
        except (ValidationError, KeyError, TypeError):  # another version's or another service's body
            raise ApiRefusal(self.base_url, status, {"error": {"message": "not a search response"}}) from None
        return data, headers.get("x-search-degraded")

    def knowledge_base_ids(self, workspace_id: str, refs: list[str]) -> list[str]:
        """Each reference (id or name) as the server's knowledge-base id, as `resolve_kb` resolves it locally."""
        from urllib.parse import urlencode

        known: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = {"workspaceId": workspace_id, "limit": 200, **({"cursor": cursor} if cursor else {})}
            status, _, body = self.call("GET", f"/api/v2/knowledge/bases?{urlencode(query)}")
            if status == 200 and not (isinstance(body, dict) and isinstance(body.get("data"), list)):
                body = {"error": {"message": "not a knowledge-base list"}}  # not an agentkb API
            if status != 200 or "error" in body:
                raise ApiRefusal(self.base_url, status, body)
            known += [kb for kb in body["data"] if isinstance(kb, dict)]
            cursor = body.get("nextCursor")
            if not cursor:
                break
        by_id = {kb.get("id"): kb.get("id") for kb in known}
        by_name = {kb.get("name"): kb.get("id") for kb in known}
        missing = [ref for ref in refs if ref not in by_id and ref not in by_name]
        if missing:
            raise ApiRefusal(self.base_url, 404, {"error": {"message": f"no knowledge base {missing[0]!r} in"
                                                                      f" workspace {workspace_id!r}"}})
        return [str(by_id.get(ref) or by_name[ref]) for ref in refs]
