"""Document writes are serialised per name (issue 23) on the embedded engine, through the ingest lambda_handler:
`expectedRevision` (409 with the current revision, nothing stored), a write whose read of the revision went stale
before its commit, and 202 writes that take their revision when queued and never overwrite a later write."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest

from agentkb.api.functions import ingest_app
from agentkb.api.routes.ingest import ingest_deps
from agentkb.composition import Ports, get_ports
from agentkb.local.indexing_worker import drain
from tests.handlers.test_background_indexing import TEXT, call
from tests.helpers import ERROR_RESPONSE

BASES = "/api/v2/knowledge/bases"
SMALL_LIMIT = 200  # documents longer than this are accepted with 202 here


@pytest.fixture()
def kb(rw_key: str) -> str:
    status, created = call("POST", BASES, rw_key, {"workspaceId": "ws1", "name": "kb"})
    assert status == 201
    return str(created["data"]["id"])


@pytest.fixture()
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ingest_app().dependency_overrides, ingest_deps,
                        lambda ports: replace(ingest_deps(ports), sync_max_chars=SMALL_LIMIT))


def post(key: str, kb: str, content: str, name: str = "a.md", **extra: Any) -> tuple[int, Any]:
    return call("POST", f"{BASES}/{kb}/documents", key, {"workspaceId": "ws1", "name": name, "content": content,
                                                        **extra})


def shown(key: str, kb: str, doc_id: str) -> dict[str, Any]:
    status, body = call("GET", f"{BASES}/{kb}/documents/{doc_id}", key, workspaceId="ws1")
    assert status == 200, body
    return body["data"]  # type: ignore[no-any-return]


def served(key: str, kb: str, query: str) -> set[str]:
    """The texts a search serves (every chunk of the KB: the vector leg matches any query)."""
    status, body = call("POST", "/api/v2/knowledge/search", key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb],
                                                                  "query": query, "topK": 50})
    assert status == 200, body
    return {r["content"] for r in body["data"]["results"]}


def conflict(status: int, body: Any) -> dict[str, Any]:
    assert status == 409, body
    ERROR_RESPONSE.validate(body)
    assert body["error"]["code"] == "CONFLICT"
    return body["error"]["details"]  # type: ignore[no-any-return]


def test_expected_revision_replaces_only_the_revision_it_names(rw_key: str, kb: str) -> None:
    status, first = post(rw_key, kb, "Otters hold hands while they sleep.", expectedRevision=0)
    assert status == 201 and first["data"]["revision"] == 1
    doc_id = first["data"]["id"]
    # expectedRevision 0 means "must not exist yet": the second create is refused and stores nothing
    assert conflict(*post(rw_key, kb, "Herons stand on one leg.", expectedRevision=0)) == {
        "currentRevision": 1, "expectedRevision": 0}
    status, second = post(rw_key, kb, "Badgers dig setts under old oaks.", expectedRevision=1)
    assert status == 201 and (second["data"]["id"], second["data"]["revision"]) == (doc_id, 2)
    # a write that read revision 1 before the one above: refused with the revision the document is at
    assert conflict(*post(rw_key, kb, "Falcons dive at great speed.", expectedRevision=1))["currentRevision"] == 2
    assert conflict(*post(rw_key, kb, "Lynx hunt hares.", name="new.md", expectedRevision=3)) == {
        "currentRevision": 0, "expectedRevision": 3}
    stored = shown(rw_key, kb, doc_id)
    assert (stored["revision"], stored["content"]) == (2, "Badgers dig setts under old oaks.")
    assert served(rw_key, kb, "herons falcons lynx") == {stored["content"]}  # nothing refused was indexed
    assert call("GET", f"{BASES}/{kb}/documents", rw_key, workspaceId="ws1")[1]["data"][0]["id"] == doc_id
    # the same text at the named revision is unchanged (201, the same revision); at another revision, 409
    assert post(rw_key, kb, "Badgers dig setts under old oaks.", expectedRevision=2)[1]["data"]["revision"] == 2
    assert conflict(*post(rw_key, kb, "Badgers dig setts under old oaks.", expectedRevision=1))[
        "currentRevision"] == 2


@pytest.mark.parametrize(("value", "message"), [
    (-1, "greater than or equal to 0"), ("1", "valid integer"), (1.5, "valid integer"), (True, "valid integer"),
    (2**53, "less than or equal to 9007199254740991")])
def test_expected_revision_is_a_whole_number_from_0(rw_key: str, kb: str, value: Any, message: str) -> None:
    status, body = post(rw_key, kb, "Marmots whistle at hawks.", expectedRevision=value)
    assert status == 400 and body["error"]["code"] == "BAD_REQUEST", body
    assert [(d["path"], message in d["message"]) for d in body["error"]["details"]] == [("expectedRevision", True)]
    assert call("GET", f"{BASES}/{kb}/documents", rw_key, workspaceId="ws1")[1]["data"] == []
    assert post(rw_key, kb, "Marmots whistle at hawks.", expectedRevision=None)[0] == 201  # null: not named


class StaleRead:
    """Lets another write of the name commit between a write's last read of the current revision (its second:
    the first checks the request, before embedding) and its commit."""

    def __init__(self, ports: Ports, other_write: Callable[[], None]) -> None:
        self.catalog, self.other_write, self.reads = ports.catalog, other_write, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.catalog, name)

    def find_document_by_name(self, kb_id: str, name: str) -> Any:
        found = self.catalog.find_document_by_name(kb_id, name)
        if found is not None and found.revision == 1:
            self.reads += 1
            if self.reads == 2:
                self.other_write()  # commits revision 2 after this read said 1
        return found


def test_a_write_whose_read_went_stale_takes_the_next_revision(rw_key: str, kb: str,
                                                               override_ports: Callable[..., Ports]) -> None:
    status, first = post(rw_key, kb, "Walruses haul out on the ice.")
    answers: list[tuple[int, Any]] = []
    override_ports(catalog=StaleRead(get_ports(), lambda: answers.append(
        post(rw_key, kb, "Ibises probe the mud for crabs."))))
    late = post(rw_key, kb, "Herons wait in the shallows.")
    assert [a[0] for a in answers] == [201] and late[0] == 201
    assert (answers[0][1]["data"]["revision"], late[1]["data"]["revision"]) == (2, 3)  # before: 2 and 2
    assert shown(rw_key, kb, first["data"]["id"])["content"] == "Herons wait in the shallows."
    assert served(rw_key, kb, "ibises crabs herons") == {"Herons wait in the shallows."}


def test_a_queued_write_takes_its_revision_and_honours_expected_revision(rw_key: str, kb: str,
                                                                         small_limit: None) -> None:
    status, first = post(rw_key, kb, "Otters hold hands while they sleep.")
    status, accepted = post(rw_key, kb, TEXT, expectedRevision=1)
    assert status == 202 and (accepted["data"]["revision"], accepted["data"]["status"]) == (2, "indexing")
    assert conflict(*post(rw_key, kb, TEXT + " Again.", expectedRevision=1))["currentRevision"] == 2
    assert shown(rw_key, kb, first["data"]["id"])["content"] == TEXT  # the refused 202 stored nothing
    assert drain(get_ports()) == 1
    indexed = shown(rw_key, kb, first["data"]["id"])
    assert (indexed["revision"], indexed["status"]) == (2, "ready")


class WriteDuringEmbedding:
    """An embedder that runs `other_write` once, while it embeds the text it is waiting for (the worker's)."""

    def __init__(self, embedder: Any, marker: str, other_write: Callable[[], None]) -> None:
        self.embedder, self.marker, self.other_write, self.fired = embedder, marker, other_write, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedder, name)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not self.fired and any(self.marker in t for t in texts):
            self.fired = True
            self.other_write()
        return self.embedder.embed_documents(texts)  # type: ignore[no-any-return]


@pytest.mark.parametrize("later", ["small", "big"])
def test_a_queued_write_indexed_after_a_later_write_never_replaces_it(rw_key: str, kb: str, small_limit: None,
                                                                      later: str) -> None:
    status, accepted = post(rw_key, kb, TEXT)
    assert status == 202 and accepted["data"]["revision"] == 1
    newer = "Lynx hunt snowshoe hares." if later == "small" else TEXT.replace("ferry", "hovercraft")
    answers: list[tuple[int, Any]] = []
    ports = get_ports()
    worker = ports.replace(embedder=WriteDuringEmbedding(ports.embedder, "ferry to island",
                                                         lambda: answers.append(post(rw_key, kb, newer))))
    drain(worker)  # while the worker embeds revision 1, revision 2 is written (201) or queued (202)
    assert [(s, b["data"]["revision"]) for s, b in answers] == [(201 if later == "small" else 202, 2)]
    drain(get_ports())  # the queued revision 2, if any
    stored = shown(rw_key, kb, accepted["data"]["id"])
    assert (stored["revision"], stored["status"], stored["content"]) == (2, "ready", newer)
    texts = served(rw_key, kb, "ferry island pier")
    assert texts and all("ferry" not in t and t in newer for t in texts)  # revision 1's text is not in the index
