"""The catalog port: workspaces, knowledge bases and the document registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from collections.abc import Collection, Sequence

    from agentkb.models.domain import Document, KnowledgeBase


class Catalog(Protocol):
    """Workspaces, knowledge bases (with tag definitions) and the document registry."""

    def create_knowledge_base(self, kb: KnowledgeBase) -> None: ...

    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None: ...

    def find_knowledge_base_by_name(self, workspace_id: str, name: str) -> KnowledgeBase | None: ...

    def list_knowledge_bases(self, workspace_id: str) -> list[KnowledgeBase]: ...

    def get_document(self, kb_id: str, document_id: str) -> Document | None: ...

    def find_document_by_name(self, kb_id: str, name: str) -> Document | None: ...

    def find_documents_by_source_path(self, kb_id: str, source_paths: Collection[str]) -> list[Document]:
        """The KB's documents read from any of these source paths (bulk ingest's file identity), in one read."""
        ...

    def list_documents(self, kb_id: str, limit: int, cursor: str | None = None) -> tuple[list[Document], str | None]:
        """A page of the KB's documents and the opaque cursor of the next page (None after the last)."""
        ...

    def document_content(self, kb_id: str, document_id: str) -> str | None:
        """The document's full text as last written (None when unknown or never stored)."""
        ...

    def document_contents(self, kb_id: str, document_ids: Sequence[str]) -> dict[str, str]:
        """document_content of each of these documents, in one read where the store can (absent: None there)."""
        ...

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """The KB and its document registry (the index has removed the chunks first)."""
        ...

    def workspace_search_mode(self, workspace_id: str) -> str | None:
        """The workspace's default search mode policy, or None for the deployment default."""
        ...
