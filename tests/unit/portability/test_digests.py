"""A section's digests (services/portability/digests.py) are sha256 of every record's text and a newline, in
order; a content digest not wanted is None; summaries taken twice, or with records added between, agree with
hashing it all at once."""

from __future__ import annotations

import hashlib

from agentkb.services.portability.digests import Digests, SectionDigest


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
