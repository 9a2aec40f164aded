"""SnapshotStore port congruence: embedded (SQLite) and AWS (DynamoDB + S3 on moto) answer alike.

Exact bytes back, first writer wins, and the knowledge base's index version the snapshot cache keys on.
"""

from __future__ import annotations

import dataclasses
import json

from port_engines import EnginePorts as Ports

from agentkb.models.domain import Chunk, Document, KnowledgeBase
from agentkb.models.snapshot import StoredSnapshot
from tests.contract.contract_corpus import CREATED, PROFILE

BODY = json.dumps({"snapshotId": "snap-1", "items": [{"text": "caf\u00e9 \u2014 \u20ac"}]},
                  ensure_ascii=False, separators=(",", ":")).encode()


def snapshot(snapshot_id: str = "snap-1", body: bytes = BODY, **fields: object) -> StoredSnapshot:
    stored = StoredSnapshot(snapshot_id, "ws1", "run-1", "attempt-1", "request-hash-1", body, CREATED)
    return dataclasses.replace(stored, **fields)


def test_an_unknown_snapshot_is_none(ports: Ports) -> None:
    assert ports.snapshots.get("snap-404") is None


def test_a_snapshot_reads_back_byte_for_byte(ports: Ports) -> None:
    stored = snapshot()
    assert ports.snapshots.put_if_absent(stored) == stored
    assert ports.snapshots.get("snap-1") == stored


def test_a_large_body_reads_back_byte_for_byte(ports: Ports) -> None:
    """Over DynamoDB's item size the AWS store keeps the body in S3: invisible through the port."""
    big = json.dumps({"items": ["x" * 1000] * 600}).encode()  # ~600 KB
    stored = snapshot("snap-big", big, run_id="run-big")
    assert ports.snapshots.put_if_absent(stored) == stored
    assert ports.snapshots.get("snap-big") == stored


def test_the_first_writer_wins(ports: Ports) -> None:
    first = snapshot()
    ports.snapshots.put_if_absent(first)
    later = snapshot(body=b'{"other":true}', request_hash="request-hash-2", created_at="2025-01-01T00:00:00Z")
    assert ports.snapshots.put_if_absent(later) == first  # the earlier one is returned, and kept
    assert ports.snapshots.get("snap-1") == first


def test_the_index_version_counts_document_writes_and_deletes(ports: Ports) -> None:
    kb = KnowledgeBase("kb-1", "ws1", "Runbooks", None, PROFILE, (), CREATED)
    assert ports.snapshots.index_version("kb-1") is None
    ports.catalog.create_knowledge_base(kb)
    assert ports.snapshots.index_version("kb-1") == 0
    doc = Document("doc-1", "kb-1", "ws1", "guide.md", None, "hash-1", {}, 1, 3, CREATED)
    chunks = [Chunk("doc-1:1:0", "doc-1", 0, "text of the guide", 3, "hash-1-0", [1.0, 0.0, 0.0, 0.0])]
    ports.index.write_document(kb, doc, chunks)
    after_write = ports.snapshots.index_version("kb-1")
    ports.index.delete_document(kb, "doc-1")
    after_delete = ports.snapshots.index_version("kb-1")
    assert (after_write, after_delete) == (1, 2)
