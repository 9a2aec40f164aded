"""The embedded engine's small ports: no reranker, no invocation deadline, uploads as local files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentkb.errors import BadRequest, NotFound
from agentkb.models.domain import RerankOutcome


class UnavailableReranker:
    """No reranker ships its weights offline: locally reranking is honestly `unavailable`."""

    def rerank(self, query: str, passages: Sequence[str], model: str) -> RerankOutcome:
        return RerankOutcome("unavailable", reason="no reranking model is available in the embedded engine")


class NoDeadline:
    """SQLite calls do not retry, so the embedded engine has nothing to bound by the invocation's deadline."""

    def set_remaining(self, remaining_ms: int | None) -> None:
        return None


class LocalObjectReader:
    """Uploaded objects as files: `<root>/<bucket>/<key>` (the embedded stand-in for the upload bucket)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def read_object(self, bucket: str, key: str) -> bytes:
        if bucket in ("", ".", "..") or "/" in bucket:
            raise BadRequest("Invalid bucket name")
        folder = (self.root / bucket).resolve()
        path = (folder / key).resolve()
        if not path.is_relative_to(folder):  # a key with ../ never leaves its bucket's folder
            raise BadRequest("Object key is outside its bucket")
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise NotFound("Uploaded object not found") from exc
