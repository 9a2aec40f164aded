"""A section's digests (services/portability/digests.py) are sha256 of every record's text and a newline, in
order; a content digest not wanted is None; summaries taken twice, or with records added between, agree with
hashing it all at once; a document's text made member by member is the encoder's."""

from __future__ import annotations

import hashlib

import pytest

from agentkb.services.portability.digests import Digests, SectionDigest, document_text
from agentkb.services.portability.records import canonical


def _expected(texts: list[bytes]) -> str:
    return hashlib.sha256(b"".join(t + b"\n" for t in texts)).hexdigest()


def test_the_digests_are_the_records_texts_hashed_in_order() -> None:
    full = [f"record {i} ".encode() * (i % 5 + 1) for i in range(200)]
    content = [t[:3] for t in full]
    digest = SectionDigest()
    for f, c in zip(full[:120], content[:120], strict=True):
        digest.add_texts(f, c)
    assert digest.summary() == {"count": 120, "sha256": _expected(full[:120]),
                                "content_sha256": _expected(content[:120])}
    for f, c in zip(full[120:], content[120:], strict=True):
        digest.add_texts(f, c)
    assert digest.summary() == digest.summary() == {"count": 200, "sha256": _expected(full),
                                                    "content_sha256": _expected(content)}


def test_a_content_digest_not_wanted_is_none_and_the_full_one_is_made_alike() -> None:
    records = [{"id": f"m{i}", "text": "x" * i} for i in range(30)]
    wanted, bare = Digests(), Digests(contents=("documents",))
    for record in records:
        wanted.add("memories", record)
        bare.add("memories", record)
    assert bare.manifest()["memories"]["content_sha256"] is None
    assert bare.manifest()["memories"]["sha256"] == wanted.manifest()["memories"]["sha256"]
    assert wanted.manifest()["memories"]["content_sha256"] is not None
    assert bare.manifest()["documents"]["content_sha256"] == hashlib.sha256(b"").hexdigest()  # wanted, empty


DOCUMENT = {"id": "d-1", "knowledge_base_id": "kb", "name": 'a "quoted" name.md', "source_url": None,
            "source_path": "docs/ä.md", "content": "Line one\nline two\t\u2028 \U0001f600 \\ end", "content_hash": "h",
            "tags": {"z": [1, 2.5, None], "a": {"b": True}, "é": "x"}, "chunk_count": 3, "token_count": 40,
            "created_at": "2026-01-01T00:00:00Z", "revision": 2, "status": "ready", "error": None,
            "secret_chunks": [0, 2]}


@pytest.mark.parametrize("change", [{}, {"secret_chunks": None}, {"secret_chunks": []}, {"tags": {}},
                                    {"error": "failed: \x00 control"}, {"source_url": "https://e.x/?a=1&b=\"2\""}])
def test_a_documents_text_made_member_by_member_is_the_encoders(change: dict[str, object]) -> None:
    record = {**DOCUMENT, **change}
    assert document_text(record) == canonical(record)


@pytest.mark.parametrize("change", [{"chunk_count": True}, {"revision": 2.0}, {"secret_chunks": [True]},
                                    {"secret_chunks": (1,)}, {"name": 5}, {"extra": 1}])
def test_a_record_not_of_a_documents_shape_is_left_to_the_encoder(change: dict[str, object]) -> None:
    record = {**DOCUMENT, **change}
    assert document_text(record) is None
    digests = Digests()
    assert digests.add("documents", record) == canonical(record)
