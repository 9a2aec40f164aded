"""Issue 25: `agentkb kb reindex` rebuilds a KB's chunks and vectors from the documents' stored text on both engines:
the vectors become the configured embedder's, and on AWS a lost collection is rebuilt from DynamoDB's records. The
switch to another profile is tests/contract/test_profile_switch_contract.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agentkb.composition import get_ports, reset_ports
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.domain import IndexQuery
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.services.ingest import service as ingest
from agentkb.services.portability.reindex import reindex_kb
from testkit.bedrock import hashed_embedding


class Hashed:
    """One model id, two vector spaces: `salt` stands for a new version of the same model."""

    def __init__(self, salt: str = "", model_id: str = "amazon.titan-embed-text-v2:0", dimension: int = 256) -> None:
        self.salt, self.model_id, self.dimension = salt, model_id, dimension

    def embed_query(self, text: str) -> list[float]:
        return hashed_embedding(self.salt + text, self.dimension)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [hashed_embedding(self.salt + t, self.dimension) for t in texts]


def _seed(bundle: Any) -> Any:
    kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId="ws1", name="kb"), OPERATOR, deps(bundle))
    for name, text in (("vpn.md", "# VPN\n\nConnect with the corporate client."),
                       ("pay.md", "# Payments\n\nFailed payments are retried three times.")):
        ingest.add_document(kb.id, AddDocumentRequest(workspaceId="ws1", name=name, content=text), OPERATOR,
                            deps(bundle))
    return kb


def _vectors(bundle: Any, kb: Any) -> dict[str, list[float] | None]:
    docs, _ = bundle.catalog.list_documents(kb.id, 10)
    return {c.id: c.embedding for d in docs for c in bundle.archive.document_chunks(kb, [d.id]).get(d.id, [])}


def test_reindex_rebuilds_the_vectors_from_the_stored_text(ports: Any, request: pytest.FixtureRequest) -> None:
    kb = _seed(ports.bundle.replace(embedder=Hashed()))
    before = _vectors(ports.bundle, kb)
    if ports.engine == "aws":  # the collection is lost: a fresh process finds no index at all
        request.getfixturevalue("aws_backend").opensearch.indexes.clear()
        reset_ports()
        assert _vectors(get_ports(), kb) == {}
    bundle = get_ports().replace(embedder=Hashed(salt="v2:"))
    counts = reindex_kb(bundle, "ws1", "kb")
    assert counts == {"documents": 2, "chunks": len(before)}
    after = _vectors(bundle, kb)
    assert set(after) == set(before)  # the same chunks (ids: document, revision, index)
    docs = {d.id: d for d in bundle.catalog.list_documents(kb.id, 10)[0]}
    for d in docs.values():
        for chunk in bundle.archive.document_chunks(kb, [d.id]).get(d.id, []):
            text = f"{chunk.context}\n{chunk.content}" if chunk.context else chunk.content
            assert chunk.embedding == pytest.approx(hashed_embedding("v2:" + text, 256), abs=1e-6)
    hits = bundle.index.lexical_search(IndexQuery("ws1", (kb.id,), text="payments retried", limit_per_kb=3))
    assert hits and docs[hits[0].document_id].name == "pay.md"

