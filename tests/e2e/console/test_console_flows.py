"""A person with a key, in headless Chromium: sign in, curate a KB, search, review a memory, inspect a snapshot
and a trace, explore the graph - each step checked in the page and, where it writes, through the API."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.console.support import SCREENSHOTS, call
from tests.unit.data_ingest.docfiles import pdf_bytes

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
    browser.refresh()  # signed in: the first page with its data, from a cold load of the console's files
    pages.wait_css(browser, "main table")
    STATE["ready_signed_in_ms"] = int(browser.execute_script("return document.documentElement.dataset.ready"))


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
    chunk = pages.wait_text(browser, "#doc-chunks article.chunk", "Chunk 0")
    assert "second keeper" in chunk.text and "tokens" in chunk.text
    pages.shoot(browser, "document")


def _docx(path: Path) -> Path:
    """A minimal DOCX: one Heading1 paragraph and one body paragraph (what Word writes, without the extras)."""
    import zipfile

    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = (f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{w}"><w:body>'
            '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Tide tables</w:t></w:r></w:p>'
            '<w:p><w:r><w:t xml:space="preserve">High tide at the Skerry </w:t></w:r><w:r><w:t>comes at noon.</w:t>'
            '</w:r></w:p></w:body></w:document>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", body)
    return path


def test_upload_reads_pdf_docx_and_html_on_the_server(browser: Any, console_server: dict[str, Any],
                                                      tmp_path: Path) -> None:
    html = tmp_path / "keepers.html"
    html.write_text("<html><head><script>var x = 1;</script></head><body><nav>Home</nav><main><h2>Keepers</h2>"
                    "<p>Two keepers share the <b>night watch</b>.</p></main></body></html>", encoding="utf-8")
    pages.open_page(browser, console_server, f"kbs/{STATE['kb']}")
    pdf = tmp_path / "beacon-log.pdf"
    pdf.write_bytes(pdf_bytes(["The beacon was relit on the ninth of March.", "Oil for the lamp comes by boat."]))
    files = [_docx(tmp_path / "tides.docx"), html, pdf]
    browser.find_element(By.ID, "upload-files").send_keys("\n".join(str(f) for f in files))
    pages.wait_text(browser, "ul.uploads", "beacon-log.pdf")
    for line in range(1, 4):
        pages.wait_text(browser, f"ul.uploads li:nth-last-child({line})", "indexed")
    status, listed = call(console_server, "GET", f"/api/v2/knowledge/bases/{STATE['kb']}/documents?workspaceId=demo")
    by_name = {d["name"]: d for d in listed["data"]}
    assert by_name["beacon-log.pdf"]["status"] == "ready"
    texts = {}
    for name in ("tides.docx", "keepers.html"):
        _, doc = call(console_server, "GET", f"/api/v2/knowledge/bases/{STATE['kb']}/documents/"
                                             f"{by_name[name]['id']}?workspaceId=demo")
        texts[name] = doc["data"]["content"]
    assert texts["tides.docx"] == "# Tide tables\n\nHigh tide at the Skerry comes at noon."
    assert texts["keepers.html"] == "## Keepers\n\nTwo keepers share the night watch."
    # the PDF opens to its text and its chunks, with the pages they come from
    pages.wait_text(browser, "main table", "beacon-log.pdf")
    browser.find_element(By.XPATH, "//a[normalize-space()='beacon-log.pdf']").click()
    pages.wait_text(browser, "#doc-content", "relit on the ninth of March")
    chunks = pages.wait_text(browser, "#doc-chunks", "Chunk 0")
    assert "pages 1, 2" in chunks.text and "Oil for the lamp" in chunks.text
    pages.shoot(browser, "document-pdf")


DROP_JS = """
const [zone, name, text] = arguments;
const files = new DataTransfer();
files.items.add(new File([text], name, { type: 'text/markdown' }));
zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: files, bubbles: true, cancelable: true }));
zone.dispatchEvent(new DragEvent('drop', { dataTransfer: files, bubbles: true, cancelable: true }));
"""


def test_a_dropped_file_is_uploaded(browser: Any, console_server: dict[str, Any]) -> None:
    pages.open_page(browser, console_server, f"kbs/{STATE['kb']}")
    zone = pages.wait_css(browser, "#drop-zone")
    browser.execute_script(DROP_JS, zone, "fog-horn.md", "# Fog horn\n\nThe fog horn sounds twice a minute.\n")
    pages.wait_text(browser, "ul.uploads li:last-child", "indexed: 1 chunks")
    pages.wait_text(browser, "main table", "fog-horn.md")


def test_search_finds_the_uploaded_document(browser: Any, console_server: dict[str, Any]) -> None:
    pages.open_page(browser, console_server, "search")
    box = pages.wait_css(browser, "input[type=search]")
    box.send_keys("who cleans the lighthouse lamp?")
    pages.button(browser, "Search").click()
    first = pages.wait_css(browser, "#search-results article.hit")
    assert "lighthouse-keeping.md" in first.text
    assert "similarity" in first.text and "score" in first.text
    assert "BM25 leg rank 1" in first.text and "vector leg rank 1" in first.text
    ranks = [h.find_element(By.CSS_SELECTOR, ".leg-bm25").text
             for h in browser.find_elements(By.CSS_SELECTOR, "#search-results article.hit")]
    assert all(r.startswith("BM25 leg rank ") for r in ranks) and any(r.endswith("—") for r in ranks), ranks
    pages.shoot(browser, "search")
    for box in browser.find_elements(By.CSS_SELECTOR, "fieldset input[type=checkbox]"):
        box.click() if box.is_selected() == ("handbook" in box.find_element(By.XPATH, "..").text) else None
    pages.button(browser, "Add tag filter").click()
    browser.find_element(By.CSS_SELECTOR, "select[aria-label='Filter tag']").send_keys("team")
    browser.find_element(By.CSS_SELECTOR, "input[aria-label='Filter value']").send_keys("harbour")
    pages.button(browser, "Search").click()
    pages.wait_text(browser, "#search-results", "1 results")
    hits = browser.find_elements(By.CSS_SELECTOR, "#search-results article.hit")
    assert [h.find_element(By.TAG_NAME, "a").text for h in hits] == ["lighthouse-keeping.md"]


DEGRADE_JS = """
// The embedder-down answer of the API (tests/reliability/test_faults.py): hybrid 200 + X-Search-Degraded from the
// lexical leg, whose hits have BM25 ranks only. The page gets the server's real hybrid body with those headers.
const real = window.fetch;
window.fetch = async (url, init) => {
  if (!String(url).endsWith('/api/v2/knowledge/search')) return real(url, init);
  const answer = await real(url, init);
  const body = await answer.text();
  const ranks = JSON.parse(body).data.results.map((hit, i) => ({ bm25: i + 1, vector: null }));
  return new Response(body, { status: answer.status, headers: { 'Content-Type': 'application/json',
    'X-Search-Degraded': 'vector_unavailable', 'X-Search-Leg-Ranks': JSON.stringify(ranks) } });
};
"""


def test_a_degraded_search_says_so(browser: Any, console_server: dict[str, Any]) -> None:
    pages.open_page(browser, console_server, "search")
    browser.execute_script(DEGRADE_JS)
    pages.wait_css(browser, "input[type=search]").send_keys("lighthouse lamp")
    pages.button(browser, "Search").click()
    first = pages.wait_css(browser, "#search-results article.hit")
    shown = browser.find_element(By.ID, "search-results").text
    assert "Degraded: vector_unavailable" in shown and "lexical leg only" in shown
    assert "BM25 leg rank 1" in first.text and "vector leg rank —" in first.text
    pages.shoot(browser, "search-degraded")
    pages.open_page(browser, console_server, "search")  # a fresh page: the real fetch again


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


def _pending(server: dict[str, Any], lesson: str) -> str:
    status, written = call(server, "POST", "/ob1/writeback", {
        "schema_version": "openbrain.agent_memory.writeback.v1", "workspace_id": "demo",
        "runtime": {"name": "hermes"}, "memory_payload": {"lessons": [lesson]}})
    assert status == 200, written
    return str(written["memories"][0]["memory_id"])


def test_edit_restrict_and_supersede_from_the_queue(browser: Any, console_server: dict[str, Any]) -> None:
    edited, restricted, old = (_pending(console_server, text) for text in (
        "The lens is polished weekly.", "Keeper rota lives in the office.", "The old lamp used paraffin."))
    pages.open_page(browser, console_server, "review")
    card = pages.wait_css(browser, f"article.memory[data-memory-id='{edited}']")
    pages.button(card, "Edit").click()
    content = browser.switch_to.active_element  # the form opens in place, focus on its first field
    content.clear()
    content.send_keys("Lens polished")
    text = card.find_element(By.TAG_NAME, "textarea")
    text.clear()
    text.send_keys("The lens is polished every Friday with a soft cloth.")
    pages.button(card, "Apply edit").click()
    pages.wait_text(browser, f"article.memory[data-memory-id='{edited}']", "edit: review")
    card = browser.find_element(By.CSS_SELECTOR, f"article.memory[data-memory-id='{restricted}']")
    pages.button(card, "Restrict").click()
    pages.field(card, "Narrow visibility to").send_keys("personal")
    pages.button(card, "Apply restrict").click()
    pages.wait_text(browser, f"article.memory[data-memory-id='{restricted}']", "restrict_scope: review")
    card = browser.find_element(By.CSS_SELECTOR, f"article.memory[data-memory-id='{old}']")
    pages.button(card, "Supersede").click()
    pages.field(card, "Superseded by memory").send_keys(edited)
    pages.button(card, "Apply supersede").click()
    pages.wait_text(browser, f"article.memory[data-memory-id='{old}']", "lifecycle superseded")
    _, after = call(console_server, "GET", f"/ob1/memories/{edited}?workspace_id=demo")
    assert after["memory"]["content"] == "The lens is polished every Friday with a soft cloth."
    assert after["memory"]["summary"] == "Lens polished"
    for memory_id, action in ((edited, "edit"), (restricted, "restrict_scope"), (old, "supersede")):
        _, body = call(console_server, "GET", f"/ob1/memories/{memory_id}?workspace_id=demo")
        assert body["memory"]["review_history"][-1]["action"] == action
    assert body["memory"]["lifecycle_status"] == "superseded"


def test_forget_a_memory_from_the_list(browser: Any, console_server: dict[str, Any]) -> None:
    doomed = _pending(console_server, "Temporary note about the boat shed.")
    pages.open_page(browser, console_server, "memories")
    pages.wait_css(browser, "main table")
    row = browser.find_element(By.XPATH, f"//tr[td[1][normalize-space()='{doomed}']]")
    pages.button(row, "Open " + doomed).click()
    pages.wait_text(browser, "main", f"Memory {doomed}")
    row = browser.find_element(By.XPATH, f"//tr[td[1][normalize-space()='{doomed}']]")
    pages.button(row, "Forget").click()
    pages.button(row, "Confirm: Forget").click()
    pages.wait_css(browser, "main table")
    status, _ = call(console_server, "GET", f"/ob1/memories/{doomed}?workspace_id=demo")
    assert status == 404


def test_delete_a_knowledge_base_after_confirming(browser: Any, console_server: dict[str, Any]) -> None:
    status, created = call(console_server, "POST", "/api/v2/knowledge/bases", {"workspaceId": "demo",
                                                                                "name": "to-delete"})
    assert status == 201
    pages.open_page(browser, console_server, "kbs")
    row = pages.wait_css(browser, "main table").find_element(By.XPATH, ".//tr[td[1][normalize-space()='to-delete']]")
    pages.button(row, "Delete").click()
    pages.button(row, "Cancel").click()  # asked first: nothing happens without the confirmation
    assert call(console_server, "GET", f"/api/v2/knowledge/bases/{created['data']['id']}?workspaceId=demo")[0] == 200
    pages.button(row, "Delete").click()
    pages.button(row, "Confirm: Delete").click()
    pages.wait_text(browser, "main", "Knowledge bases")
    WebDriverWait = pytest.importorskip("selenium.webdriver.support.ui").WebDriverWait
    WebDriverWait(browser, pages.WAIT_S).until(lambda d: "to-delete" not in d.find_element(By.TAG_NAME, "main").text)
    assert call(console_server, "GET", f"/api/v2/knowledge/bases/{created['data']['id']}?workspaceId=demo")[0] == 404


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
    assert all(word in table for word in ("task", "documents", "graph", "trusted-knowledge"))
    pages.shoot(browser, "snapshot")
    link = browser.find_element(By.XPATH, "//main//table//a[normalize-space()='open the document']")
    assert f"#/kbs/{STATE['kb']}/docs/" in link.get_attribute("href")
    STATE["snapshot"] = f"snapshots/{snapshot['snapshotId']}"
    tampered = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('./jcs.js').then(async ({ verifySnapshot }) => {
          const s = await (await fetch(arguments[0], { headers: arguments[1] })).json();
          s.items[0].tokens += 1;
          done((await verifySnapshot(s)).ok);
        });""", f"{console_server['base']}/v1/snapshots/{snapshot['snapshotId']}", {"X-API-Key": console_server["key"]})
    assert tampered is False  # the browser's check can fail: one changed number is caught


TRICKY = json.dumps({"\u00e9": 1, "a": [1.5, 1e21, 1e-7, 0.1, -0.0, 123456789012345, 5e-324, 2.5e20],
                     "Z": None, "\u2028": "line\u2028sep", "b": 'quote" back\\ slash\n tab\t \u0001',
                     "\U0001F600": True, "": {"y": [], "x": {}}})


def test_the_browsers_canonical_json_is_the_servers(browser: Any) -> None:
    """The bytes the snapshot hash covers: keys by UTF-16 code units, ECMAScript numbers and escapes."""
    from agentkb.services.snapshot.canonical_json import canonical_bytes

    ours = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('./jcs.js').then(({ canonical }) => done(canonical(JSON.parse(arguments[0]))));""", TRICKY)
    assert ours == canonical_bytes(json.loads(TRICKY)).decode("utf-8")


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
    pages.field(browser, "Run a recall").send_keys("billing-api canary")
    pages.button(browser, "Recall").click()
    pages.wait_css(browser, "#recall-trace-link").click()
    pages.wait_text(browser, "main section h2", "Trace ")
    assert "billing-api canary" in browser.find_element(By.TAG_NAME, "main").text
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
    if page == "doc":  # a document of more chunks than one page holds: "More chunks" on show
        text = "\n\n".join(f"## Watch {i}\n\n" + " ".join(f"Keeper note {i}.{j} on the lamp, the lens and the log."
                                                            for j in range(12)) for i in range(30))
        status, doc = call(server, "POST", f"/api/v2/knowledge/bases/{STATE['kb']}/documents",
                           {"workspaceId": "demo", "name": "watch-log.md", "content": text})
        assert status in (200, 201), doc
        STATE["doc"] = f"kbs/{STATE['kb']}/docs/{doc['data']['id']}"
    route = {"kb": f"kbs/{STATE.get('kb')}", "snapshot": STATE.get("snapshot"), "trace": STATE.get("trace"),
             "doc": STATE.get("doc")}
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
    elif page == "doc":
        pages.wait_css(browser, "#more-chunks")
        pages.wait_text(browser, "#doc-chunks", "Chunk 19")
    elif page in ("review", "kb", "snapshot", "trace", "memories"):
        pages.wait_css(browser, {"review": "article.memory", "kb": "main table", "snapshot": "#hash-check",
                                 "trace": "main section table", "memories": "main table"}[page])


@pytest.mark.parametrize("page", ["kbs", "kb", "doc", "search", "review", "memories", "trace", "snapshot",
                                  "graph"])
def test_keyboard_reaches_every_action(browser: Any, console_server: dict[str, Any], page: str) -> None:
    _prepare(browser, console_server, page)
    actions, reached = pages.tab_through(browser)
    assert len(actions) > 5
    STATE.setdefault("keyboard_actions", {})[page] = len(actions)
    assert [a for i, a in enumerate(actions) if i not in reached] == []


def test_no_severe_entry_in_the_browser_console(browser: Any) -> None:
    entries = browser.get_log("browser")
    (SCREENSHOTS / "browser-console.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")
    measured = {k: STATE.get(k) for k in ("ready_ms", "ready_signed_in_ms", "keyboard_actions")}
    (SCREENSHOTS / "measured.json").write_text(json.dumps(measured), encoding="utf-8")
    assert [e for e in entries if e["level"] == "SEVERE"] == []


def test_a_same_named_upload_is_a_conflict_until_replaced(browser: Any, console_server: dict[str, Any]) -> None:
    """After the console check: the 409 is an answer the page shows, and Chromium logs it as a failed load."""
    pages.open_page(browser, console_server, f"kbs/{STATE['kb']}")
    zone = pages.wait_css(browser, "#drop-zone")
    browser.execute_script(DROP_JS, zone, "fog-horn.md", "# Fog horn\n\nThe fog horn sounds three times a minute.\n")
    line = pages.wait_text(browser, "ul.uploads li:last-child", "conflict")
    assert 'a document named "fog-horn.md" exists (revision 1)' in line.text
    pages.shoot(browser, "upload-conflict")
    pages.button(line, "Replace fog-horn.md").click()
    pages.wait_text(browser, "ul.uploads li:last-child", "revision 2")
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert severe and all("409" in e["message"] for e in severe), severe


def test_an_unreadable_pdf_is_refused_with_the_reason(browser: Any, console_server: dict[str, Any],
                                                     tmp_path: Path) -> None:
    """After the console check: the 422 is an answer the page shows, and Chromium logs it as a failed load."""
    pages.open_page(browser, console_server, f"kbs/{STATE['kb']}")
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(b"%PDF-1.4\n%%EOF\n")
    pages.wait_css(browser, "#upload-files").send_keys(str(scan))
    line = pages.wait_text(browser, "ul.uploads li:last-child", "failed")
    assert "422 UNPROCESSABLE" in line.text and "yields no text" in line.text
    status, listed = call(console_server, "GET", f"/api/v2/knowledge/bases/{STATE['kb']}/documents?workspaceId=demo")
    assert "scan.pdf" not in {d["name"] for d in listed["data"]}


def test_a_wrong_key_is_refused_and_signing_out_forgets_the_key(browser: Any, console_server: dict[str, Any]) -> None:
    """Last: the refused sign-in is a 401 answer, which Chromium logs as a failed load."""
    pages.open_page(browser, console_server, "kbs")
    pages.button(browser, "Sign out").click()
    pages.wait_text(browser, "main", "Signed out.")
    assert browser.execute_script("return sessionStorage.getItem('agentkb.console.session')") is None
    pages.field(browser, "Workspace").send_keys("demo")
    pages.field(browser, "API key").send_keys("akb_0000000000000000_not-a-key")
    pages.button(browser, "Sign in").click()
    pages.wait_text(browser, "main", "This API key is not valid here.")
    assert browser.execute_script("return sessionStorage.getItem('agentkb.console.session')") is None
    pages.field(browser, "API key").clear()
    pages.field(browser, "API key").send_keys(console_server["key"])
    pages.field(browser, "Workspace").clear()
    pages.field(browser, "Workspace").send_keys("nobody-else")
    pages.button(browser, "Sign in").click()
    pages.wait_text(browser, "main", "This key cannot reach that workspace.")
