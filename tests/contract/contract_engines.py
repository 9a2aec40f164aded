"""The Index contract's engines: embedded SQLite (always), OpenSearch replayed from recordings (always), and
OpenSearch against a live collection (marker `live`, only with AGENTKB_OPENSEARCH_ENDPOINT set).

The replaying transport evaluates nothing: every request must equal a recorded request (method, path, JSON or
NDJSON body); it then answers with that exchange's recorded response. Recordings live in recordings/*.json.
With AGENTKB_AUTHOR_RECORDINGS=<recording> it instead serves that file's hand-written responses in order and
writes the requests the adapter actually sent back into it (review the diff before committing). With
AGENTKB_RECORD_FROM_FAKE=1 every recording is rewritten from the in-memory OpenSearch of testkit (its BM25 and
cosine scores): how the recordings were re-made when the legs started returning ids (review the diff too).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.aws.opensearch.index import OpenSearchIndex
from agentkb.adapters.aws.opensearch.transport import HttpResponse, JsonClient
from agentkb.models.domain import Document, KnowledgeBase
from tests.contract.contract_corpus import KNOWLEDGE_BASES, PROFILE, documents

RECORDINGS = Path(__file__).parent / "recordings"
PREFIX = "agentkb"


def _decode(path: str, body: bytes | None) -> Any:
    if not body:
        return None
    text = body.decode("utf-8")
    if path.endswith("/_bulk"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


class ReplayTransport:
    """Answers each request with the recorded response of an identical recorded request (used once each)."""

    def __init__(self) -> None:
        self.exchanges: list[dict[str, Any]] = []
        self.used: list[bool] = []
        self.author: Path | None = None
        self.author_position = 0

    def load(self, name: str) -> None:
        path = RECORDINGS / f"{name}.json"
        recorded = json.loads(path.read_text())["exchanges"]
        if os.environ.get("AGENTKB_AUTHOR_RECORDINGS") == name:
            self.author, self.author_position = path, 0
        self.exchanges.extend(recorded)
        self.used.extend([False] * len(recorded))

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        sent = {"method": method, "path": path, "body": _decode(path, body)}
        if self.author is not None and self.author_position < len(json.loads(self.author.read_text())["exchanges"]):
            return self._author(sent)
        for position, exchange in enumerate(self.exchanges):
            if not self.used[position] and exchange["request"] == sent:
                self.used[position] = True
                response = exchange["response"]
                raw = b"" if response.get("body") is None else json.dumps(response["body"]).encode()
                return HttpResponse(response["status"], raw, {})
        raise AssertionError(f"unrecorded request: {json.dumps(sent)[:2000]}")

    def _author(self, sent: dict[str, Any]) -> HttpResponse:
        data = json.loads(self.author.read_text())  # type: ignore[union-attr]
        exchange = data["exchanges"][self.author_position]
        exchange["request"] = sent
        self.author.write_text(json.dumps(data, indent=1) + "\n")  # type: ignore[union-attr]
        self.author_position += 1
        response = exchange["response"]
        return HttpResponse(response["status"], b"" if response.get("body") is None else
                            json.dumps(response["body"]).encode(), {})

    def unused(self) -> list[dict[str, Any]]:
        return [e["request"] for e, u in zip(self.exchanges, self.used, strict=True) if not u]


class FakeRecorder:
    """Serves requests from the in-memory OpenSearch and keeps each exchange, to be written as recordings."""

    def __init__(self) -> None:
        from testkit.fake_opensearch import FakeOpenSearch

        self.fake = FakeOpenSearch()
        self.exchanges: list[dict[str, Any]] = []
        self.recording = "write_corpus"

    def load(self, name: str) -> None:
        RECORDINGS.joinpath("write_corpus.json").write_text(json.dumps({"exchanges": self.exchanges}, indent=1) + "\n")
        self.exchanges, self.recording = [], name

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        answer = self.fake.request(method, path, body, headers)
        self.exchanges.append({"request": {"method": method, "path": path, "body": _decode(path, body)},
                               "response": {"status": answer.status,
                                            "body": json.loads(answer.body) if answer.body else None}})
        return answer

    def unused(self) -> list[dict[str, Any]]:
        if self.recording != "write_corpus":
            path = RECORDINGS / f"{self.recording}.json"
            path.write_text(json.dumps({"exchanges": self.exchanges}, indent=1) + "\n")
        return []


class KnowledgeBases:
    """The catalog's get_knowledge_base for the OpenSearch engine (KB -> profile -> index)."""

    def __init__(self, kbs: tuple[KnowledgeBase, ...]) -> None:
        self.kbs = {kb.id: kb for kb in kbs}

    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None:
        kb = self.kbs.get(kb_id)
        return kb if kb is not None and kb.workspace_id == workspace_id else None


class Registry:
    """The document registry the OpenSearch index commits to (the DynamoDB catalog in AWS)."""

    def __init__(self) -> None:
        self.documents: dict[str, Document] = {}

    def claim_revision(self, document: Document, replaces: int | None) -> None:
        """The corpus is written once, by one writer: every claim succeeds (test_document_revision_contract.py
        checks the claims of the real registry)."""

    def put_document(self, document: Document) -> bool:
        self.documents[document.id] = document
        return True

    def delete_document(self, kb_id: str, document_id: str) -> None:
        self.documents.pop(document_id, None)


class Engine:
    def __init__(self, name: str, index: Any, has_document: Callable[[str, str], bool], *,
                 transport: ReplayTransport | None = None, settle_s: float = 0.0) -> None:
        self.name = name
        self.index = index
        self.has_document = has_document
        self.transport = transport
        self.settle_s = settle_s

    def use_recording(self, name: str) -> None:
        if self.transport is not None:
            self.transport.load(name)

    def eventually(self, check: Callable[[], None]) -> None:
        """Run a check; on a live collection retry it while the index catches up with writes (~10-60 s)."""
        eventually(check, self.settle_s)


def eventually(check: Callable[[], None], settle_s: float) -> None:
    """Run a check, retrying it every 5 s for up to `settle_s` while it fails (the AOSS refresh lag)."""
    deadline = time.monotonic() + settle_s
    while True:
        try:
            check()
            return
        except AssertionError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(5)


def _write_corpus(index: Any) -> None:
    for kb, document, chunks in documents():
        index.write_document(kb, document, chunks)


def _embedded(tmp_path: Path) -> Engine:
    from agentkb.adapters.embedded.index import SqliteIndex
    from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
    from agentkb.adapters.embedded.sqlite.db import Database

    db = Database(tmp_path / "contract.sqlite3")
    catalog = SqliteCatalog(db)
    for kb in KNOWLEDGE_BASES:
        catalog.create_knowledge_base(kb)
    index = SqliteIndex(db)
    _write_corpus(index)
    return Engine("embedded", index, lambda kb_id, doc_id: catalog.get_document(kb_id, doc_id) is not None)


def _recorded() -> Engine:
    transport: Any = FakeRecorder() if os.environ.get("AGENTKB_RECORD_FROM_FAKE") else ReplayTransport()
    if isinstance(transport, ReplayTransport):
        transport.load("write_corpus")
    registry = Registry()
    client = JsonClient(transport, sleep=lambda _: None)
    index = OpenSearchIndex(client, KnowledgeBases(KNOWLEDGE_BASES), registry, prefix=PREFIX,
                            generation="classic", default_profile=PROFILE)
    _write_corpus(index)
    return Engine("opensearch-recorded", index, lambda kb_id, doc_id: doc_id in registry.documents,
                  transport=transport)


_LIVE: list[Engine] = []


def _live() -> Engine:
    """One live index per session (creating an index and waiting for visibility per test would take minutes)."""
    if _LIVE:
        return _LIVE[0]
    from agentkb.adapters.aws.opensearch.transport import SigV4Transport

    endpoint = os.environ["AGENTKB_OPENSEARCH_ENDPOINT"]
    region = os.environ.get("AWS_REGION") or os.environ.get("AGENTKB_REGION") or "us-east-1"
    registry = Registry()
    index = OpenSearchIndex(JsonClient(SigV4Transport(endpoint, region), max_call_s=60.0),
                            KnowledgeBases(KNOWLEDGE_BASES), registry,
                            prefix=f"{PREFIX}-contract-{uuid.uuid4().hex[:8]}",
                            generation=os.environ.get("AGENTKB_OPENSEARCH_GENERATION", "classic"),
                            default_profile=PROFILE)
    _write_corpus(index)
    _LIVE.append(Engine("opensearch-live", index, lambda kb_id, doc_id: doc_id in registry.documents,
                        settle_s=120.0))
    return _LIVE[0]


ENGINES = [
    pytest.param("embedded", id="embedded"),
    pytest.param("opensearch-recorded", id="opensearch-recorded"),
    pytest.param("opensearch-live", id="opensearch-live", marks=[
        pytest.mark.live, pytest.mark.skipif(not os.environ.get("AGENTKB_OPENSEARCH_ENDPOINT"),
                                             reason="AGENTKB_OPENSEARCH_ENDPOINT is not set")]),
]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    kind = request.param
    built = _embedded(tmp_path) if kind == "embedded" else _recorded() if kind == "opensearch-recorded" else _live()
    yield built
    if built.transport is not None and not os.environ.get("AGENTKB_AUTHOR_RECORDINGS"):
        assert built.transport.unused() == [], "recorded exchanges the adapter never requested"
