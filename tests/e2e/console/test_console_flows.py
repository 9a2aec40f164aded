"""A person with a key, in headless Chromium: sign in, curate a KB, search, review a memory, inspect a snapshot
and a trace, explore the graph - each step checked in the page and, where it writes, through the API."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.console.conftest import SCREENSHOTS, call

pytestmark = pytest.mark.e2e
pages = pytest.importorskip("tests.e2e.console.pages", reason="selenium is not installed")
By = pytest.importorskip("selenium.webdriver.common.by").By
STATE: dict[str, Any] = {}


def test_the_console_is_served_with_a_strict_policy(console_server: dict[str, Any]) -> None:
    with urllib.request.urlopen(console_server["base"] + "/console/", timeout=10) as response:
        headers, html = response.headers, response.read().decode()
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "connect-src 'self'" in headers["Content-Security-Policy"]
    assert "http" not in html.replace('http-equiv', '')  # nothing from another host
    assert "/console/" in console_server["console_line"]


def test_sign_in_with_an_api_key(browser: Any, console_server: dict[str, Any]) -> None:
    pages.open_page(browser, console_server, "kbs")
    STATE["ready_ms"] = int(browser.execute_script("return document.documentElement.dataset.ready"))
    pages.shoot(browser, "signin")
    pages.field(browser, "Workspace").send_keys(console_server["workspace"])
    pages.field(browser, "API key").send_keys(console_server["key"])
    pages.button(browser, "Sign in").click()
    pages.wait_text(browser, "main h1", "Knowledge bases")
    assert console_server["key"] not in browser.current_url
    stored = json.loads(browser.execute_script("return sessionStorage.getItem('agentkb.console.session')"))
    assert stored["secret"] == console_server["key"]
    urls = browser.execute_script("return performance.getEntriesByType('resource').map((e) => e.name)")
    assert urls and not [u for u in urls if console_server["key"] in u or not u.startswith(console_server["base"])]


def test_create_a_kb_and_upload_a_file(browser: Any, console_server: dict[str, Any], tmp_path: Path) -> None:
    name = f"console-{uuid.uuid4().hex[:6]}"
    pages.field(browser, "Name").send_keys(name)
    pages.button(browser, "Add tag").click()
    browser.switch_to.active_element.send_keys("team")
    pages.button(browser, "Create knowledge base").click()
    pages.wait_text(browser, "main", f'Created "{name}"')
    browser.find_element(By.XPATH, f"//a[normalize-space()='{name}']").click()
    pages.wait_text(browser, "main h1", name)
    STATE["kb"] = browser.current_url.rsplit("/", 1)[-1]
    doc = tmp_path / "lighthouse-keeping.md"
    doc.write_text("# Lighthouse keeping\n\nThe lamp of the Skerry lighthouse is cleaned every Tuesday at dawn by "
                   "the second keeper, who logs the lens temperature in the brass ledger.\n", encoding="utf-8")
    browser.find_element(By.CSS_SELECTOR, "input[aria-label^='Tag team']").send_keys("harbour")
    browser.find_element(By.ID, "upload-files").send_keys(str(doc))
    pages.wait_text(browser, "ul.uploads", "indexed: 1 chunks")
    pages.wait_text(browser, "main table", "lighthouse-keeping.md")
    assert "ready" in browser.find_element(By.CSS_SELECTOR, "main table").text
    assert "team: harbour" in browser.find_element(By.CSS_SELECTOR, "main table").text
    pages.shoot(browser, "knowledge-base")
    browser.find_element(By.XPATH, "//a[normalize-space()='lighthouse-keeping.md']").click()
    pages.wait_text(browser, "#doc-content", "second keeper")
    pages.shoot(browser, "document")


def test_search_finds_the_uploaded_document(browser: Any, console_server: dict[str, Any]) -> None:
    pages.open_page(browser, console_server, "search")
    box = pages.wait_css(browser, "input[type=search]")
    box.send_keys("who cleans the lighthouse lamp?")
    pages.button(browser, "Search").click()
    first = pages.wait_css(browser, "#search-results article.hit")
    assert "lighthouse-keeping.md" in first.text
    assert "similarity" in first.text and "score" in first.text and "vector leg rank 1" in first.text
    pages.shoot(browser, "search")


def test_confirm_a_pending_memory(browser: Any, console_server: dict[str, Any]) -> None:
    status, written = call(console_server, "POST", "/ob1/writeback", {
        "schema_version": "openbrain.agent_memory.writeback.v1", "workspace_id": "demo",
        "runtime": {"name": "hermes"}, "memory_payload": {"lessons": ["Lighthouse lens logs live in the ledger."]}})
    assert status == 200, written
    memory_id = written["memories"][0]["memory_id"]
    pages.open_page(browser, console_server, "review")
    card = pages.wait_css(browser, f"article.memory[data-memory-id='{memory_id}']")
    assert "Lighthouse lens logs" in card.text and "Confidence" in card.text and "Provenance" in card.text
    for label in ("Confirm", "Edit", "Reject", "Restrict", "Mark stale", "Dispute", "Supersede"):
        assert pages.button(card, label).is_enabled()
    pages.shoot(browser, "review")
    pages.field(card, "Review notes").send_keys("checked against the ledger")
    pages.button(card, "Confirm").click()
    pages.wait_text(browser, f"article.memory[data-memory-id='{memory_id}']", "confirm: review confirmed")
    assert "checked against the ledger" in card.text  # the audit history, shown after the action
    status, body = call(console_server, "GET", f"/ob1/memories/{memory_id}?workspace_id=demo")
    assert status == 200 and body["memory"]["review_status"] == "confirmed"
    assert body["memory"]["review_history"][-1]["notes"] == "checked against the ledger"


def test_a_snapshot_opens_with_its_hash_verified(browser: Any, console_server: dict[str, Any]) -> None:
    status, snapshot = call(console_server, "POST", "/v1/snapshots", {
        "runId": str(uuid.uuid4()), "attemptId": str(uuid.uuid4()), "task": "Who cleans the lamp?",
        "scope": {"workspaceId": "demo", "knowledgeBaseIds": [STATE["kb"]], "maxClassification": "internal"},
        "budget": {"maxTokens": 2000, "reservedForOutput": 200},
        "sources": {"knowledge": {"knowledgeBaseIds": [STATE["kb"]], "query": "lighthouse lamp", "topK": 3},
                    "graph": {"query": "billing-api"}}})
    assert status in (200, 201), snapshot
    pages.open_page(browser, console_server, f"snapshots/{snapshot['snapshotId']}")
    check = pages.wait_css(browser, "#hash-check")
    assert check.get_attribute("data-verified") == "true" and snapshot["hash"] in check.text
    table = browser.find_element(By.CSS_SELECTOR, "main table").text
    assert "documents" in table and "trusted-knowledge" in table or "graph" in table
    pages.shoot(browser, "snapshot")
    STATE["snapshot"] = f"snapshots/{snapshot['snapshotId']}"
    tampered = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('./jcs.js').then(async ({ verifySnapshot }) => {
          const s = await (await fetch(arguments[0], { headers: arguments[1] })).json();
          s.items[0].tokens += 1;
          done((await verifySnapshot(s)).ok);
        });""", f"{console_server['base']}/v1/snapshots/{snapshot['snapshotId']}", {"X-API-Key": console_server["key"]})
    assert tampered is False  # the browser's check can fail: one changed number is caught


def test_a_recall_trace_shows_what_was_returned_and_used(browser: Any, console_server: dict[str, Any]) -> None:
    status, recalled = call(console_server, "POST", "/ob1/recall", {
        "schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": "demo",
        "query": "how does billing-api deploy?", "runtime": {"name": "hermes"}})
    assert status == 200 and recalled["memories"], recalled
    used = recalled["memories"][0]["memory_id"]
    status, _ = call(console_server, "POST", f"/ob1/recall/{recalled['request_id']}/usage", {
        "workspace_id": "demo", "used_memory_ids": [used]})
    assert status == 200
    pages.open_page(browser, console_server, f"traces/{recalled['request_id']}")
    pages.wait_text(browser, "main", f"Trace {recalled['request_id']}")
    rows = browser.find_element(By.CSS_SELECTOR, "main section table").text
    assert "used" in rows and "how does billing-api deploy?" in browser.find_element(By.TAG_NAME, "main").text
    pages.shoot(browser, "trace")
    STATE["trace"] = f"traces/{recalled['request_id']}"


def test_graph_entity_shows_relations_and_proofs(browser: Any, console_server: dict[str, Any]) -> None:
    pages.open_page(browser, console_server, "graph")
    pages.wait_css(browser, "#graph-query").send_keys("billing-api")
    pages.button(browser, "Search graph").click()
    pages.wait_css(browser, "main section button").click()
    view = pages.wait_css(browser, "#entity-view")
    assert "Relations" in view.text and "proof:" in view.text
    pages.shoot(browser, "graph")
    pages.open_page(browser, console_server, "memories")
    pages.wait_text(browser, "main", "memories")
    pages.shoot(browser, "memories")


def _prepare(browser: Any, server: dict[str, Any], page: str) -> None:
    """The page with its actions on show: a KB's documents, search hits, a pending memory, an entity."""
    if page == "review":
        call(server, "POST", "/ob1/writeback", {"schema_version": "openbrain.agent_memory.writeback.v1",
             "workspace_id": "demo", "runtime": {"name": "hermes"},
             "memory_payload": {"lessons": ["The fog horn is tested on the first of the month."]}})
    route = {"kb": f"kbs/{STATE.get('kb')}", "snapshot": STATE.get("snapshot"), "trace": STATE.get("trace")}
    pages.open_page(browser, server, route.get(page, page))
    pages.wait_css(browser, "main h1")
    if page == "search":
        pages.wait_css(browser, "input[type=search]").send_keys("lighthouse lamp")
        pages.button(browser, "Search").click()
        pages.wait_css(browser, "#search-results article.hit")
    elif page == "graph":
        pages.wait_css(browser, "#graph-query").send_keys("billing-api")
        pages.button(browser, "Search graph").click()
        pages.wait_css(browser, "main section button").click()
        pages.wait_css(browser, "#entity-view")
    elif page in ("review", "kb", "snapshot", "trace", "memories"):
        pages.wait_css(browser, {"review": "article.memory", "kb": "main table", "snapshot": "#hash-check",
                                 "trace": "main section table", "memories": "main table"}[page])


@pytest.mark.parametrize("page", ["kbs", "kb", "search", "review", "memories", "trace", "snapshot", "graph"])
def test_keyboard_reaches_every_action(browser: Any, console_server: dict[str, Any], page: str) -> None:
    _prepare(browser, console_server, page)
    actions, reached = pages.tab_through(browser)
    assert len(actions) > 5
    assert [a for i, a in enumerate(actions) if i not in reached] == []


def test_no_severe_entry_in_the_browser_console(browser: Any) -> None:
    entries = browser.get_log("browser")
    (SCREENSHOTS / "browser-console.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")
    (SCREENSHOTS / "measured.json").write_text(json.dumps({"ready_ms": STATE.get("ready_ms")}), encoding="utf-8")
    assert [e for e in entries if e["level"] == "SEVERE"] == []
