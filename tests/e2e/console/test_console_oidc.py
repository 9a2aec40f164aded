"""A person signing in with the organisation's identity provider, in headless Chromium: `agentkb serve` trusts a
loopback OpenID provider (testkit/oidc_provider.py) whose login page the browser fills in; the console runs the
authorization code flow with PKCE and calls the API with the access token. Each refusal is checked where it is
made: the console (state), the provider (verifier), the API (a token for another audience)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from testkit.oidc_provider import OidcProvider, User
from tests.e2e.console.support import SCREENSHOTS, chromium, env_for, missing_browser

pytestmark = pytest.mark.e2e
pages = pytest.importorskip("tests.e2e.console.pages", reason="selenium is not installed")
By = pytest.importorskip("selenium.webdriver.common.by").By
WebDriverWait = pytest.importorskip("selenium.webdriver.support.ui").WebDriverWait
CLIENT = "agentkb-console"
SESSION = "return sessionStorage.getItem('agentkb.console.session')"


@pytest.fixture(scope="module")
def oidc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = missing_browser()
    if reason:
        pytest.skip(reason)
    provider = OidcProvider(clients={}, users={
        "alice": User("alice", ("api:read", "api:write"), ("demo",), name="Alice Keeper"),
        "brief": User("brief", ("api:read",), ("demo",), ttl_s=20)}).start()
    env = {**env_for(tmp_path_factory.mktemp("console-oidc")), "AGENTKB_OIDC_ISSUER": provider.issuer,
           "AGENTKB_OIDC_AUDIENCE": "agentkb", "AGENTKB_OIDC_CONSOLE_CLIENT_ID": CLIENT,
           "AGENTKB_OIDC_CONSOLE_NAME": "Test provider"}
    proc = subprocess.Popen([sys.executable, "-m", "agentkb.cli.main", "serve", "--host", "127.0.0.1", "--port", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = proc.stdout.readline()  # type: ignore[union-attr]
        base = "http://127.0.0.1:" + re.search(r"http://127\.0\.0\.1:(\d+)", first).group(1)  # type: ignore[union-attr]
        provider.clients[CLIENT] = f"{base}/console/"
        server = {"base": base, "provider": provider}
        setup = provider.keys.mint("setup", ["api:read", "api:write"], ["demo"])
        status, _ = call(server, "POST", "/api/v2/knowledge/bases", setup, {"workspaceId": "demo", "name": "harbour"})
        assert status == 201
        yield server
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        provider.stop()


@pytest.fixture(scope="module")
def browser(oidc_server: dict[str, Any]) -> Iterator[Any]:
    with chromium() as driver:
        yield driver


def call(server: dict[str, Any], method: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    request = urllib.request.Request(server["base"] + path, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def to_provider(browser: Any, server: dict[str, Any], workspace: str = "demo") -> None:
    """From a fresh sign-in page to the provider's login page, by the console's OIDC button."""
    pages.open_page(browser, server, "kbs")
    pages.field(browser, "Workspace").send_keys(workspace)
    pages.wait_css(browser, "#signin-oidc").click()
    authorize = server["provider"].issuer + "/authorize?"
    WebDriverWait(browser, pages.WAIT_S).until(lambda d: d.current_url.startswith(authorize))  # navigated first
    pages.wait_text(browser, "h1", "Test provider")


def at_provider(browser: Any, username: str, decision: str = "Approve") -> None:
    pages.field(browser, "Username").send_keys(username)
    pages.button(browser, decision).click()


def test_the_config_document_names_the_issuer_and_the_policy_reaches_it_only(oidc_server: dict[str, Any]) -> None:
    with urllib.request.urlopen(oidc_server["base"] + "/console/config.json", timeout=10) as response:
        config, csp = json.loads(response.read()), response.headers["Content-Security-Policy"]
    issuer = oidc_server["provider"].issuer
    assert config == {"oidc": {"issuer": issuer, "clientId": CLIENT, "name": "Test provider",
                               "scope": "openid api:read api:write", "workspaceScope": None}}
    assert f"connect-src 'self' {issuer};" in csp and "script-src 'self';" in csp and csp.count("http") == 1


def test_the_sign_in_page_offers_both_methods_to_the_keyboard(browser: Any, oidc_server: dict[str, Any]) -> None:
    pages.open_page(browser, oidc_server, "kbs")
    pages.wait_text(browser, "#signin-oidc", "Sign in with Test provider")
    assert pages.field(browser, "API key").get_attribute("type") == "password"
    pages.shoot(browser, "signin-oidc")
    actions, reached = pages.tab_through(browser)
    oidc = [i for i, a in enumerate(actions) if a == "button:Sign in with Test provider"]
    assert oidc and oidc[0] in reached and [a for i, a in enumerate(actions) if i not in reached] == []


def test_sign_in_with_the_issuer_and_list_knowledge_bases(browser: Any, oidc_server: dict[str, Any]) -> None:
    to_provider(browser, oidc_server)
    query = dict(p.split("=", 1) for p in browser.current_url.split("?", 1)[1].split("&"))
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["response_type"] == "code" and query["state"] and query["nonce"] and "client_secret" not in query
    at_provider(browser, "alice")
    pages.wait_text(browser, "main h1", "Knowledge bases")
    pages.wait_text(browser, "main table", "harbour")
    assert browser.current_url == f"{oidc_server['base']}/console/#/kbs"  # no code, no state left in the URL
    assert "Alice Keeper" in browser.find_element(By.ID, "who").text
    stored = json.loads(browser.execute_script(SESSION))
    assert stored["kind"] == "bearer" and browser.execute_script("return localStorage.length") == 0
    claims = jwt.decode(stored["secret"], options={"verify_signature": False})
    assert claims["sub"] == "alice" and claims["scope"] == "api:read api:write"
    urls = browser.execute_script("return performance.getEntriesByType('resource').map((e) => e.name)")
    assert not [u for u in urls if stored["secret"] in u]
    pages.shoot(browser, "signed-in-oidc")
    status, memory = call(oidc_server, "POST", "/v1/memories", stored["secret"], {
        "workspace_id": "demo", "visibility": "personal", "type": "note", "name": "oidc", "body": "Signed in."})
    assert status == 201, memory
    status, read = call(oidc_server, "GET", f"/v1/memories/{memory['memory_id']}?workspace_id=demo", stored["secret"])
    assert status == 200 and read["data"]["owner_id"] == "alice"  # the principal is the token's subject


def test_a_token_the_api_refuses_returns_to_sign_in(browser: Any, oidc_server: dict[str, Any]) -> None:
    stored = json.loads(browser.execute_script(SESSION))
    other = oidc_server["provider"].keys.mint("alice", ["api:read"], ["demo"], aud="another-api")
    browser.execute_script("sessionStorage.setItem('agentkb.console.session', arguments[0])",
                           json.dumps({**stored, "secret": other}))
    browser.refresh()
    pages.wait_text(browser, "main", "The API refused the credential (401): sign in again.")
    assert browser.execute_script(SESSION) is None


def test_sign_out_forgets_the_token(browser: Any, oidc_server: dict[str, Any]) -> None:
    to_provider(browser, oidc_server)
    at_provider(browser, "alice")
    pages.wait_text(browser, "main h1", "Knowledge bases")
    pages.button(browser, "Sign out").click()
    pages.wait_text(browser, "main", "Signed out.")
    assert browser.execute_script(SESSION) is None
    assert browser.execute_script("return sessionStorage.getItem('agentkb.console.oidc-pending')") is None


def test_an_expired_token_returns_to_sign_in(browser: Any, oidc_server: dict[str, Any]) -> None:
    to_provider(browser, oidc_server)
    at_provider(browser, "brief")  # a 20 s token
    pages.wait_text(browser, "main h1", "Knowledge bases")
    pages.wait_text(browser, "main", "Your sign-in has expired: sign in again.")
    assert browser.execute_script(SESSION) is None


def test_no_severe_entry_in_the_browser_console(browser: Any) -> None:
    entries = browser.get_log("browser")
    (SCREENSHOTS / "browser-console-oidc.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")
    # the refused token above is a 401 answer, which Chromium logs as a failed load: nothing else may be severe
    assert [e for e in entries if e["level"] == "SEVERE" and "401" not in e["message"]] == []


def test_a_denied_sign_in_is_shown(browser: Any, oidc_server: dict[str, Any]) -> None:
    to_provider(browser, oidc_server)
    at_provider(browser, "alice", "Deny")
    pages.wait_text(browser, "main", "did not sign you in: access_denied - The user did not approve the sign-in")
    assert "error=" not in browser.current_url and browser.execute_script(SESSION) is None


def test_a_tampered_state_is_refused(browser: Any, oidc_server: dict[str, Any]) -> None:
    to_provider(browser, oidc_server)
    state = browser.find_element(By.CSS_SELECTOR, "input[name=state]")  # the request the login page carries
    browser.execute_script("arguments[0].value = 'forged-state'", state)
    at_provider(browser, "alice")
    pages.wait_text(browser, "main", "state mismatch")
    assert browser.execute_script(SESSION) is None and "code=" not in browser.current_url


def test_an_id_token_for_another_sign_in_is_refused(browser: Any, oidc_server: dict[str, Any]) -> None:
    oidc_server["provider"].forged_nonce = "replayed-nonce"
    try:
        to_provider(browser, oidc_server)
        at_provider(browser, "alice")
        pages.wait_text(browser, "main", "the nonce is not this sign-in's: refused")
    finally:
        oidc_server["provider"].forged_nonce = None
    assert browser.execute_script(SESSION) is None


def test_a_wrong_verifier_is_refused_by_the_provider(browser: Any, oidc_server: dict[str, Any]) -> None:
    to_provider(browser, oidc_server)
    authorize = browser.current_url
    pages.open_page(browser, oidc_server, "kbs")  # back in the console's tab: its pending sign-in, tampered with
    browser.execute_script("""const p = JSON.parse(sessionStorage.getItem('agentkb.console.oidc-pending'));
        p.verifier = 'x'.repeat(43); sessionStorage.setItem('agentkb.console.oidc-pending', JSON.stringify(p));""")
    browser.get(authorize)
    at_provider(browser, "alice")
    pages.wait_text(browser, "main", "refused the code: invalid_grant - code_verifier does not match")
    assert oidc_server["provider"].refusals[-1] == "code_verifier does not match the code_challenge"
    assert browser.execute_script(SESSION) is None
