"""The write-back firewall refuses at least what OB1's server refuses, with every reason listed."""

from __future__ import annotations

import pytest

from agentkb.services.ob1.firewall import BLOCKED, UnsafeWriteback, enforce_writeback_firewall, unsafe_reasons

FENCE = "`" * 3


@pytest.mark.parametrize(("text", "reason"), [
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "private_key"),
    ("use key sk-or-v1-" + "a" * 30, "api_key"),
    ("prefixsk-" + "b" * 24, "api_key"),
    ("password: hunter2hunter2", "credential_like_string"),
    ("mysecret=abcdefghijklmnop", "credential_like_string"),
    (f"{FENCE}py\nx\n{FENCE}\n{FENCE}py\ny\n{FENCE}", "large_code_block"),
    ("\n".join("x" * 121 for _ in range(21)), "large_code_block"),
    ("a" * 15_001, "raw_transcript_like"),
    ("\n".join(f"{'user' if i % 2 else 'assistant'}: line {i}" for i in range(7)), "raw_transcript_like"),
    ("<thinking>let me consider</thinking> done", "reasoning_dump"),
    ("Thought: a\nThought: b\nReasoning: c", "reasoning_dump"),
])
def test_unsafe_texts_are_refused_with_their_reason(text: str, reason: str) -> None:
    assert reason in unsafe_reasons(text)


@pytest.mark.parametrize("text", [
    "Deploys wait for the Tuesday window; the payments team owns rollbacks.",
    "The token bucket refills at 10 per second.", "user: asks once\nassistant: answers once",
    f"{FENCE}sh\nmake run\n{FENCE}", "Thought: one line of rationale is fine."])
def test_ordinary_operational_memory_passes(text: str) -> None:
    assert unsafe_reasons(text) == []


def test_every_reason_of_every_row_is_listed_without_the_text() -> None:
    with pytest.raises(UnsafeWriteback) as caught:
        enforce_writeback_firewall([("lesson", "memory_payload.lessons.0", "fine"),
                                    ("output", "memory_payload.outputs.0", "token=" + "z" * 20 + "\nsk-" + "q" * 22)])
    body = caught.value.envelope()
    assert body["error"] == BLOCKED and body["code"] == "UNPROCESSABLE" and caught.value.http_status == 422
    assert {(u["reason"], u["path"]) for u in body["unsafe"]} == {
        ("api_key", "memory_payload.outputs.0"), ("credential_like_string", "memory_payload.outputs.0")}
    assert "zzzz" not in str(body)
