"""ChunkReader on the embedded database (ports/chunks.py): the chunks table holds one revision per document (a
write replaces them in its transaction), current as soon as the write commits."""

from __future__ import annotations

import json

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.models.domain import Document, KnowledgeBase
from agentkb.ports.chunks import StoredChunk


class SqliteChunkPages:
    def __init__(self, db: Database) -> None:
        self.db = db

    def document_chunks_page(self, kb: KnowledgeBase, document: Document, after_index: int,
                             limit: int) -> list[StoredChunk]:
        rows = self.db.connection().execute(
            "SELECT chunk_index, content, token_count, pages, secret FROM chunks WHERE workspace_id = ? AND"
            " knowledge_base_id = ? AND document_id = ? AND chunk_index > ? ORDER BY chunk_index LIMIT ?",
            (kb.workspace_id, kb.id, document.id, after_index, limit))
        return [StoredChunk(int(r[0]), r[1], int(r[2]), tuple(json.loads(r[3])) if r[3] else (),
                            None if r[4] is None else bool(r[4])) for r in rows]
