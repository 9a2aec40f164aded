"""Issue 25: `agentkb kb reindex --embedding-model M` moves a KB to another embedding profile in place, on both
engines (embedded SQLite; AWS on moto and the in-memory OpenSearch). Searches answer from the old vectors until the
new ones are complete, then from the new ones; a write or delete during the reindex ends in the new generation; a
failure part way leaves the KB searchable on the old profile and a re-run completes; the old generation is gone
after; a bad model or a second target answers a clear error and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from agentkb.errors import BadRequest, Conflict, DependencyError
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.domain import EmbeddingProfile, KnowledgeBase
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.models.search import KnowledgeSearchRequest
from agentkb.services.ingest import service as ingest
from agentkb.services.portability.reindex import reindex_kb
from agentkb.services.search.service import SearchDeps, search_knowledge
from testkit.bedrock import hashed_embedding
from testkit.embedders import Embedders, HashedEmbedder

OLD = HashedEmbedder()  # Titan v2 at 256-d
NEW = HashedEmbedder(salt="minilm:", model_id="sentence-transformers/all-MiniLM-L6-v2", dimension=64)
THIRD = HashedEmbedder(salt="512:", dimension=512)  # Titan v2 at 512-d: a profile the deployment can build too
DOCS = (("vpn.md", "# VPN\n\nConnect with the corporate client before opening the wiki."),
        ("pay.md", "# Payments\n\nFailed payments are retried three times."),
        ("tax.md", "# Taxes\n\nInvoices carry the customer's tax number."))


@pytest.fixture(autouse=True)
def _no_settling(monkeypatch: pytest.MonkeyPatch) -> None:
    """The AWS drop waits out searches in flight (30 s); these tests' searches run in this process, beside it."""
    from agentkb.adapters.aws.opensearch.generations import OpenSearchShadowGenerations

    monkeypatch.setattr(OpenSearchShadowGenerations, "settle_s", 0.0)


def _bundles(bundle: Any) -> tuple[Any, Any]:
    """The deployment before (configured for the old profile) and the operator's (for the new one); both can build
    the other profile's embedder."""
    registry = Embedders(OLD, NEW, THIRD)
    return bundle.replace(embedder=OLD, embedders=registry), bundle.replace(embedder=NEW, embedders=registry)


def _seed(bundle: Any) -> KnowledgeBase:
    kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId="ws1", name="kb"), OPERATOR, deps(bundle))
    for name, text in DOCS:
        _add(bundle, kb, name, text)
    return kb


def _add(bundle: Any, kb: KnowledgeBase, name: str, text: str) -> None:
    ingest.add_document(kb.id, AddDocumentRequest(workspaceId="ws1", name=name, content=text), OPERATOR,
                        deps(bundle))


def _search(bundle: Any, kb: KnowledgeBase, query: str) -> list[tuple[str | None, float]]:
    request = KnowledgeSearchRequest(workspaceId="ws1", knowledgeBaseIds=[kb.id], query=query, searchMode="vector")
    outcome = search_knowledge(request, OPERATOR, SearchDeps(bundle.catalog, bundle.index, bundle.embedder,
                                                             bundle.reranker, embedders=bundle.embedders))
    return [(r.documentName, round(r.similarity, 4)) for r in outcome.data.results]


def _embedded_with(bundle: Any, kb: KnowledgeBase, embedder: HashedEmbedder) -> dict[str, bool]:
    """Per document name: every stored chunk carries `embedder`'s vector of its text."""
    docs, _ = bundle.catalog.list_documents(kb.id, 50)
    out = {}
    for d in docs:
        chunks = bundle.archive.document_chunks(kb, [d.id]).get(d.id, [])
        out[d.name] = bool(chunks) and all(
            c.embedding is not None and len(c.embedding) == embedder.dimension and c.embedding == pytest.approx(
                hashed_embedding(embedder.salt + (f"{c.context}\n{c.content}" if c.context else c.content),
                                 embedder.dimension), abs=1e-5) for c in chunks)
    return out


def _kb(bundle: Any, kb: KnowledgeBase) -> KnowledgeBase:
    found = bundle.catalog.get_knowledge_base("ws1", kb.id)
    assert found is not None
    return found


def _old_generation(ports: Any, request: pytest.FixtureRequest, kb: KnowledgeBase) -> int:
    """What is left of the KB outside its live generation: embedded, chunks not of the live width and shadow or
    pending rows; AWS, records of the KB in any index of another profile than its own."""
    if ports.engine == "embedded":
        conn = ports.bundle.builder.database.connection()
        width = 4 * kb.profile.dimension
        return sum(conn.execute(sql, (kb.id,)).fetchone()[0] for sql in (
            f"SELECT count(*) FROM chunks WHERE knowledge_base_id = ? AND length(embedding) != {width}",
            "SELECT count(*) FROM shadow_vectors WHERE knowledge_base_id = ?",
            "SELECT count(*) FROM profile_switches WHERE knowledge_base_id = ?"))
    from agentkb.adapters.aws.opensearch.documents import documents_index
    from agentkb.adapters.aws.opensearch.dsl import index_name

    live = index_name(ports.bundle.settings.opensearch_index_prefix, kb.profile)
    indexes = request.getfixturevalue("aws_backend").opensearch.indexes
    return sum(1 for name, docs in indexes.items() if name not in (live, documents_index(live))
               for doc in docs.values() if doc.get("knowledge_base_id") == kb.id)


def test_searches_answer_from_the_old_vectors_until_the_switch_then_from_the_new(
        ports: Any, request: pytest.FixtureRequest) -> None:
    before_bundle, operator = _bundles(ports.bundle)
    kb = _seed(before_bundle)
    before = _search(before_bundle, kb, "payments retried")
    assert before and before[0][0] == "pay.md"
    during: list[list[tuple[str | None, float]]] = []

    def progress(done: int) -> None:  # a search between every staged document: the old vectors answer
        during.append(_search(before_bundle, kb, "payments retried"))

    counts = reindex_kb(operator, "ws1", "kb", f"{NEW.model_id}@{NEW.dimension}", progress)

    assert counts["switched"] == 1 and counts["documents"] == len(DOCS) and counts["chunks"] >= len(DOCS)
    assert during and all(hits == before for hits in during)
    assert _kb(operator, kb).profile == EmbeddingProfile(NEW.model_id, NEW.dimension)
    assert operator.generations.pending(_kb(operator, kb)) is None
    assert set(_embedded_with(operator, _kb(operator, kb), NEW).values()) == {True}
    after = _search(operator, kb, "payments retried")  # the new vectors answer, through the configured embedder
    assert after and after[0][0] == "pay.md" and after != before
    assert _search(before_bundle, kb, "payments retried") == after  # the old deployment: the registry's NEW
    assert _old_generation(ports, request, _kb(operator, kb)) == 0  # the old generation is dropped
    # the old deployment keeps writing to the KB: under its new profile, through the registry
    _add(before_bundle, _kb(before_bundle, kb), "late.md", "# Laptops\n\nLaptops are replaced every three years.")
    assert _embedded_with(before_bundle, _kb(before_bundle, kb), NEW)["late.md"]
    assert _search(before_bundle, kb, "laptops replaced")[0][0] == "late.md"


def test_a_write_and_a_delete_during_the_reindex_end_in_the_new_generation(ports: Any) -> None:
    writer, operator = _bundles(ports.bundle)
    kb = _seed(writer)
    tax = next(d for d in writer.catalog.list_documents(kb.id, 10)[0] if d.name == "tax.md")
    done: list[int] = []

    def progress(n: int) -> None:
        done.append(n)
        if len(done) == 1:  # while the switch is pending: the writer still embeds under the old profile
            _add(writer, kb, "new.md", "# Laptops\n\nLaptops are replaced every three years.")
            _add(writer, kb, "vpn.md", "# VPN\n\nThe VPN client was replaced by the zero-trust agent.")
            ingest.delete_document(kb.id, tax.id, "ws1", OPERATOR, deps(writer))

    counts = reindex_kb(operator, "ws1", kb.id, NEW.model_id, progress)

    switched = _kb(operator, kb)
    assert switched.profile.dimension == NEW.dimension and counts["caughtUp"] >= 1
    assert _embedded_with(operator, switched, NEW) == {"vpn.md": True, "pay.md": True, "new.md": True}
    hits = _search(operator, kb, "laptops replaced every three years")
    assert hits[0][0] == "new.md"
    vpn = next(d for d in operator.catalog.list_documents(kb.id, 10)[0] if d.name == "vpn.md")
    assert "zero-trust" in (operator.catalog.document_content(kb.id, vpn.id) or "")


class Failing(HashedEmbedder):
    """The new model, failing after `ok` batches (a throttled or killed reindex)."""

    def __init__(self, ok: int) -> None:
        super().__init__(NEW.salt, NEW.model_id, NEW.dimension)
        self.ok = ok

    def embed_documents(self, texts: Any) -> list[list[float]]:
        if self.calls >= self.ok:
            raise DependencyError("the embedding model is unavailable", code="embedding_failed")
        return super().embed_documents(texts)


def test_a_reindex_failing_part_way_leaves_the_old_profile_serving_and_a_re_run_completes(
        ports: Any, request: pytest.FixtureRequest) -> None:
    before_bundle, operator = _bundles(ports.bundle)
    kb = _seed(before_bundle)
    before = _search(before_bundle, kb, "corporate client")
    with pytest.raises(DependencyError):
        reindex_kb(operator.replace(embedder=Failing(ok=1)), "ws1", kb.id, NEW.model_id)
    assert _kb(before_bundle, kb).profile == EmbeddingProfile(OLD.model_id, OLD.dimension)
    assert operator.generations.pending(kb) == EmbeddingProfile(NEW.model_id, NEW.dimension)
    assert _search(before_bundle, kb, "corporate client") == before
    assert set(_embedded_with(before_bundle, kb, OLD).values()) == {True}

    # a second target while this one is pending is refused, naming the pending one
    with pytest.raises(Conflict, match=NEW.model_id):
        reindex_kb(before_bundle, "ws1", kb.id, f"{THIRD.model_id}@{THIRD.dimension}")

    counts = reindex_kb(operator, "ws1", kb.id, NEW.model_id)
    assert counts["switched"] == 1 and counts["documents"] == len(DOCS)
    if ports.engine == "embedded":  # the shadow written before the failure is kept
        assert counts["resumed"] == 1
    assert set(_embedded_with(operator, _kb(operator, kb), NEW).values()) == {True}
    assert _search(operator, kb, "corporate client")[0][0] == "vpn.md"
    assert _old_generation(ports, request, _kb(operator, kb)) == 0


def test_a_model_the_deployment_cannot_build_is_refused_and_changes_nothing(ports: Any) -> None:
    before_bundle, operator = _bundles(ports.bundle)
    kb = _seed(before_bundle)
    stored = _embedded_with(before_bundle, kb, OLD)
    for bad in ("no-such-model", f"{OLD.model_id}@999", f"{NEW.model_id}@@"):
        with pytest.raises(BadRequest) as refused:
            reindex_kb(operator, "ws1", kb.id, bad)
        assert refused.value.details == [{"path": "--embedding-model", "message": refused.value.details[0]["message"]}]
    assert operator.generations.pending(kb) is None
    assert _kb(operator, kb).profile == kb.profile
    assert _embedded_with(before_bundle, kb, OLD) == stored


def test_an_embedded_write_embedded_before_the_switch_is_refused_after_it(data_dir: Any) -> None:
    """The embedded engine checks the KB's profile where a write commits: chunks embedded for the old profile never
    land beside the new vectors (AWS: the reindex's pass after the switch rebuilds such a document, docs)."""
    from agentkb.composition import get_ports
    from agentkb.models.domain import Chunk, Document

    before_bundle, operator = _bundles(get_ports())
    kb = _seed(before_bundle)
    stale = _kb(before_bundle, kb)
    reindex_kb(operator, "ws1", kb.id, NEW.model_id)
    document = Document("d-stale", kb.id, "ws1", "stale.md", None, "h", {}, 1, 3, "2026-01-01T00:00:00Z")
    chunk = Chunk(id="d-stale:1:0", document_id="d-stale", chunk_index=0, content="stale text", token_count=3,
                  content_hash="h", embedding=OLD.embed_query("stale text"))
    with pytest.raises(Conflict, match="switched to another embedding profile"):
        operator.index.write_document(stale, document, [chunk], replaces=0)
    assert operator.catalog.get_document(kb.id, "d-stale") is None


def test_deleting_a_kb_while_its_switch_is_pending_leaves_no_shadow(ports: Any, request: pytest.FixtureRequest) -> None:
    from agentkb.services.ingest.knowledge_admin import delete_knowledge_base

    before_bundle, operator = _bundles(ports.bundle)
    kb = _seed(before_bundle)
    with pytest.raises(DependencyError):
        reindex_kb(operator.replace(embedder=Failing(ok=2)), "ws1", kb.id, NEW.model_id)
    assert _old_generation(ports, request, kb) > 0  # the shadow written so far, and the pending record
    delete_knowledge_base(operator.catalog, operator.index, OPERATOR, "ws1", kb.id, operator.generations)
    assert operator.catalog.get_knowledge_base("ws1", kb.id) is None
    assert _old_generation(ports, request, kb) == 0


def test_searches_running_beside_the_reindex_see_the_old_or_the_new_generation_never_a_mix(ports: Any) -> None:
    import threading

    before_bundle, operator = _bundles(ports.bundle)
    kb = _seed(before_bundle)
    query = "payments retried"
    before = _search(before_bundle, kb, query)
    seen: list[list[tuple[str | None, float]]] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def searching() -> None:
        while not stop.is_set():
            try:
                seen.append(_search(before_bundle, kb, query))
            except BaseException as exc:  # any failure of a search during the switch fails the test
                failures.append(exc)
                return

    searcher = threading.Thread(target=searching)
    searcher.start()
    try:
        reindex_kb(operator, "ws1", kb.id, NEW.model_id)
    finally:
        stop.set()
        searcher.join(30)
    after = _search(before_bundle, kb, query)
    assert failures == [] and seen
    assert {tuple(hits) for hits in seen} <= {tuple(before), tuple(after)}


def test_a_search_that_read_the_kb_before_the_switch_answers_from_the_new_generation(ports: Any) -> None:
    """Deterministic form of the race above: the KB read says the old profile, the vectors are already the new."""
    before_bundle, operator = _bundles(ports.bundle)
    kb = _seed(before_bundle)
    stale = _kb(before_bundle, kb)
    reindex_kb(operator, "ws1", kb.id, NEW.model_id)
    after = _search(before_bundle, kb, "payments retried")

    class StaleOnce:
        def __init__(self, catalog: Any) -> None:
            self.catalog, self.reads = catalog, 0

        def __getattr__(self, name: str) -> Any:
            return getattr(self.catalog, name)

        def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None:
            self.reads += 1
            return stale if self.reads == 1 else self.catalog.get_knowledge_base(workspace_id, kb_id)

    catalog = StaleOnce(before_bundle.catalog)
    assert _search(before_bundle.replace(catalog=catalog), kb, "payments retried") == after
    assert catalog.reads == 2


def test_a_run_killed_between_the_switch_and_the_drop_is_finished_by_the_next(
        ports: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    before_bundle, operator = _bundles(ports.bundle)
    kb = _seed(before_bundle)
    generations = type(operator.generations)
    drop = generations.drop

    def killed(self: Any, kb: KnowledgeBase, old: EmbeddingProfile) -> None:
        raise KeyboardInterrupt  # the operator's kill, after the switch

    monkeypatch.setattr(generations, "drop", killed)
    with pytest.raises(KeyboardInterrupt):
        reindex_kb(operator, "ws1", kb.id, NEW.model_id)
    switched = _kb(operator, kb)
    assert switched.profile == EmbeddingProfile(NEW.model_id, NEW.dimension)
    if ports.engine == "aws":  # the old index still holds the KB's records, unread
        assert _old_generation(ports, request, switched) > 0
    assert _search(before_bundle, kb, "payments retried")[0][0] == "pay.md"  # from the new generation
    monkeypatch.setattr(generations, "drop", drop)
    reindex_kb(operator, "ws1", kb.id)  # any next run (here: the same profile) finishes the drop first
    assert _old_generation(ports, request, switched) == 0
    assert operator.generations.leftover(switched) is None
