"""The console's files through the search function's real lambda_handler (what `agentkb serve` and the API
stage call): the policy headers, the redirect that keeps a stage, only this folder's files, and the API untouched."""

from __future__ import annotations

import json

import pytest

from agentkb.console import static
from tests.helpers import http_event, invoke, rest_event

FILES = sorted(p.relative_to(static.ROOT).as_posix() for p in static.ROOT.rglob("*") if p.suffix in static.TYPES)


@pytest.mark.parametrize("name", FILES)
def test_every_file_is_served_with_its_type_and_the_strict_policy(name: str) -> None:
    response = invoke("search", rest_event("GET", f"/console/{name}"))
    assert response["statusCode"] == 200
    headers = response["headers"]
    assert headers["Content-Type"] == static.TYPES["." + name.rsplit(".", 1)[-1]]
    assert headers["Content-Security-Policy"] == static.CSP and headers["X-Content-Type-Options"] == "nosniff"
    assert response["body"] == (static.ROOT / name).read_text(encoding="utf-8")


def test_the_policy_allows_this_origin_only() -> None:
    directives = dict(d.strip().split(" ", 1) for d in static.CSP.split(";"))
    assert directives["default-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    assert all(v in ("'self'", "'none'") for v in directives.values())  # no host, no 'unsafe-inline', no data:


def test_no_file_names_another_host() -> None:
    for name in FILES:
        text = (static.ROOT / name).read_text(encoding="utf-8")
        hosts = [w for w in text.split() if "://" in w and "schemas.openxmlformats.org" not in w
                 and not w.startswith("agentkb://")  # snapshot source ids, a name of ours, never fetched
                 and "www.w3.org/2000/svg" not in w]
        assert hosts == [], name  # XML namespaces are names, never fetched


def test_the_root_redirects_relatively_and_the_index_answers_the_folder() -> None:
    redirect = invoke("search", rest_event("GET", "/console"))
    assert redirect["statusCode"] == 308 and redirect["headers"]["Location"] == "console/"
    index = invoke("search", http_event("GET", "/console/"))  # HTTP API v2 too
    assert index["statusCode"] == 200 and '<script type="module" src="app.js">' in index["body"]


@pytest.mark.parametrize("path", ["/console/static.py", "/console/__init__.py", "/console/../config.py",
                                  "/console/pages/../../errors.py", "/console/nope.js", "/console/.hidden.js",
                                  "/console/a/b/c.js", "/console/%2e%2e/config.py"])
def test_nothing_else_is_reachable(path: str) -> None:
    response = invoke("search", rest_event("GET", path))
    assert response["statusCode"] == 404 and "Content-Security-Policy" in response["headers"]
    assert "import" not in response["body"]


def test_writes_are_refused_and_the_api_is_untouched() -> None:
    refused = invoke("search", rest_event("POST", "/console/app.js", {}))
    assert refused["statusCode"] == 405 and refused["headers"]["Allow"] == "GET, HEAD"
    health = invoke("search", rest_event("GET", "/health"))
    assert health["statusCode"] == 200 and json.loads(health["body"])["status"] == "ok"
    assert "Content-Security-Policy" not in (health.get("headers") or {})
    unknown = invoke("search", rest_event("GET", "/consoles"))
    assert unknown["statusCode"] == 404 and json.loads(unknown["body"])["error"]["code"] == "NOT_FOUND"
    assert invoke("search", {"operation": "health"})["statusCode"] == 200  # direct invocation passes through


def test_an_installed_package_without_functions_dir_serves_the_console_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install agentkb` ships agentkb/ only: the local gateway falls back to the bare search app, wrapped."""
    import importlib

    from agentkb.local import server

    real = importlib.import_module

    def no_handler_modules(name: str, package: str | None = None) -> object:
        if name.endswith(".handler"):
            raise ModuleNotFoundError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_handler_modules)
    monkeypatch.setattr(server, "_handlers", {})
    page = server.dispatch(server.to_rest_event("GET", "/console/", {}, b""))
    assert page["statusCode"] == 200 and page["headers"]["Content-Security-Policy"] == static.CSP
    health = server.dispatch(server.to_rest_event("GET", "/health", {}, b""))
    assert health["statusCode"] == 200


def test_an_unchanged_file_revalidates_with_304() -> None:
    first = invoke("search", rest_event("GET", "/console/app.js"))
    etag = first["headers"]["ETag"]
    again = invoke("search", rest_event("GET", "/console/app.js", headers={"If-None-Match": etag}))
    assert again["statusCode"] == 304 and again["body"] == "" and again["headers"]["ETag"] == etag
    other = invoke("search", rest_event("GET", "/console/app.js", headers={"If-None-Match": '"stale"'}))
    assert other["statusCode"] == 200 and other["body"] == first["body"]


def test_the_config_document_offers_no_issuer_by_default() -> None:
    response = invoke("search", rest_event("GET", "/console/config.json"))
    assert response["statusCode"] == 200 and response["headers"]["Content-Type"] == "application/json"
    assert json.loads(response["body"]) == {"oidc": None}
    assert response["headers"]["Content-Security-Policy"] == static.CSP


OIDC = {"oidc_issuer": "https://login.example.com/tenant/v2.0", "oidc_audience": "api://agentkb",
        "oidc_console_client_id": "console-spa"}


def test_with_a_console_client_the_config_names_the_issuer_and_the_policy_its_origin_only() -> None:
    from agentkb.config import Settings

    settings = Settings(**OIDC)
    answer = static.console_response("GET", "/console/config.json", settings=settings)
    assert answer is not None and json.loads(answer["body"]) == {"oidc": {
        "issuer": OIDC["oidc_issuer"], "clientId": "console-spa", "name": "login.example.com",
        "scope": "openid api:read api:write", "workspaceScope": None}}
    assert "secret" not in answer["body"].lower()
    page = static.console_response("GET", "/console/", settings=settings)
    assert page is not None
    directives = dict(d.strip().split(" ", 1) for d in page["headers"]["Content-Security-Policy"].split(";"))
    assert directives["connect-src"] == "'self' https://login.example.com"  # the origin, not the issuer's path
    assert {k: v for k, v in directives.items() if k != "connect-src"} == {
        k: v for k, v in dict(d.strip().split(" ", 1) for d in static.CSP.split(";")).items() if k != "connect-src"}
    without_client = Settings(**{k: v for k, v in OIDC.items() if k != "oidc_console_client_id"})
    assert static.console_response("GET", "/console/", settings=without_client)["headers"][  # type: ignore[index]
        "Content-Security-Policy"] == static.CSP  # tokens for agents only: the console's policy stays as it was


def test_cognito_style_scopes_carry_the_prefix_and_ask_for_the_workspace() -> None:
    from agentkb.config import Settings

    settings = Settings(**OIDC, oidc_scope_prefix="agentkb/", oidc_workspaces_claim="scope",
                        oidc_console_name="Acme SSO")
    oidc = static.console_oidc(settings)
    assert oidc is not None and oidc["name"] == "Acme SSO"
    assert (oidc["scope"], oidc["workspaceScope"]) == ("openid agentkb/api:read agentkb/api:write",
                                                       "agentkb/workspace:")


def test_a_console_client_without_an_issuer_fails_the_cold_start() -> None:
    from pydantic import ValidationError

    from agentkb.config import Settings

    with pytest.raises(ValidationError):
        Settings(oidc_console_client_id="console-spa")


def test_the_serve_banner_offers_the_issuer_only_when_the_console_has_a_client() -> None:
    from agentkb.config import Settings
    from agentkb.local.server import console_sign_in

    assert console_sign_in(Settings()) == "sign in with an API key"
    assert console_sign_in(Settings(**OIDC, oidc_console_name="Acme SSO")) == (
        "sign in with an API key or with Acme SSO")
    tokens_for_agents_only = Settings(**{k: v for k, v in OIDC.items() if k != "oidc_console_client_id"})
    assert console_sign_in(tokens_for_agents_only) == "sign in with an API key"
