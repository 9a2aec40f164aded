"""Secret provenance of knowledge: which chunks carry a detected secret, and what that forbids.

A chunk is scanned (context line and content, as embedded) by the one secret detector when its document is
written; the flag is stored with the chunk on both engines and the flagged chunk indexes with the document.
A knowledge base with `secretPolicy: "refuse"` refuses such documents (422, nothing stored); the default `flag`
stores them flagged. A reranked search whose candidates include a flagged chunk answers 409 before any text
leaves for a reranking model; snapshots exclude flagged chunks (reason `classification`). Chunks stored before
this existed carry no flag (None) and are scanned when read, so nothing unscanned reaches a reranker or a snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.errors import Conflict, Unprocessable
from agentkb.models.domain import IndexHit, KnowledgeBase
from agentkb.services.ingest.chunking import TextChunk
from agentkb.services.secrets.detector import find_secrets

MAX_LISTED = 20  # chunk ids named in a 409 (the rest are counted)


def secret_chunk_indexes(pieces: Sequence[TextChunk]) -> tuple[int, ...]:
    """Indexes of the pieces in which the detector finds a secret (what is embedded: context and content)."""
    return tuple(p.index for p in pieces if find_secrets(p.embedding_text))


def refusal(kinds: list[str], chunks: Sequence[int] = ()) -> Unprocessable:
    """The 422 of a `refuse` knowledge base: finding kinds and chunk indexes only, never the secret."""
    details: dict[str, Any] = {"reason": "secret_detected", "kinds": sorted(set(kinds))}
    if chunks:
        details["chunkIndexes"] = list(chunks[:MAX_LISTED])
    return Unprocessable("The document contains what looks like a credential and this knowledge base refuses "
                         "such documents; remove it and retry", details=details)


def enforce_policy(kb: KnowledgeBase, pieces: Sequence[TextChunk], flagged: Sequence[int]) -> None:
    """Refuse a scanned document when its knowledge base says so (before anything is written)."""
    if kb.secret_policy == "refuse" and flagged:
        wanted = set(flagged)
        kinds = [k for p in pieces if p.index in wanted for k in find_secrets(p.embedding_text)]
        raise refusal(kinds, flagged)


def refuse_text(kb: KnowledgeBase, content: str) -> None:
    """Admission check of a `refuse` KB for a document indexed later (nothing may be stored for it)."""
    if kb.secret_policy == "refuse":
        kinds = find_secrets(content)
        if kinds:
            raise refusal(kinds)


def is_flagged(hit: IndexHit) -> bool:
    """A hit's stored flag; a chunk stored before flags existed is scanned now."""
    return hit.secret if hit.secret is not None else bool(find_secrets(hit.content))


def enforce_rerank_provenance(hits: Sequence[IndexHit]) -> None:
    """409 CONFLICT when any reranking candidate carries a secret (ids only), before any text is sent."""
    flagged = [h for h in hits if is_flagged(h)]
    if flagged:
        raise Conflict("Reranking would send chunks that carry a detected secret to the reranking model; search "
                       "without reranking, or remove the secret and re-ingest the document", details={
                           "reason": "secret_provenance", "flaggedCount": len(flagged),
                           "chunks": [{"chunkId": h.chunk_id, "documentId": h.document_id,
                                       "knowledgeBaseId": h.knowledge_base_id, "chunkIndex": h.chunk_index}
                                      for h in flagged[:MAX_LISTED]]})
