"""The write-back firewall: secrets, raw transcripts, reasoning dumps and large code blocks are refused before
anything is stored, with every reason listed (the memory type and path of each, never the offending text).

The one secret detector (secret_detector.py) is the floor; on top, rules at least as strict as OB1's server: any
credential-named assignment of 12+ characters, two fenced code blocks or 20+ lines over 120 characters, 15,000+
characters or 7+ chat-role lines, and reasoning traces (thinking tags, Thought:/Reasoning: lines).
"""

from __future__ import annotations

import re
from typing import Any

from agentkb.errors import Unprocessable
from agentkb.services.secrets.detector import find_secrets

BLOCKED = "Unsafe write-back blocked"
# No word boundary before the name: `mysecret: ...` and `xsk-...` are refused too.
_CREDENTIAL = re.compile(r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)\b[\"']?\s*[:=]\s*"
                         r"[\"']?\S{12,}")
_SK_KEY = re.compile(r"sk-[A-Za-z0-9_-]{20,}")
_ROLE_LINE = re.compile(r"(?i)^\s*(?:user|assistant|system|agent|human|ai|tool)\s*:")
_REASONING_TAG = re.compile(r"(?i)<\s*(?:think|thinking|reasoning|scratchpad|chain[_ -]?of[_ -]?thought)\s*>")
_REASONING_LINE = re.compile(r"(?i)^\s*(?:thought|reasoning|internal monologue)\s*:")
_CREDENTIAL_KINDS = ("credential_assignment", "password_in_url")  # the detector's kinds OB1 calls credential-like
MAX_CHARS = 15_000
MAX_ROLE_LINES = 6
MAX_LONG_LINES = 20
LONG_LINE = 120
MAX_REASONING_LINES = 2


class UnsafeWriteback(Unprocessable):
    """422 with the body OB1's clients check (`error` is the message string) plus our code and the reasons."""

    def __init__(self, unsafe: list[dict[str, str]]):
        super().__init__(BLOCKED, details={"unsafe": unsafe})
        self.unsafe = unsafe

    def envelope(self) -> dict[str, Any]:
        return {"error": BLOCKED, "code": self.code,
                "message": "Store a compact summary and artifact links, not secrets, transcripts, reasoning or code",
                "unsafe": self.unsafe}


def unsafe_reasons(text: str) -> list[str]:
    """Why a text may not be stored as memory (empty when it may)."""
    reasons: list[str] = []
    secrets = find_secrets(text)
    if "private_key" in secrets:
        reasons.append("private_key")
    if any(kind not in ("private_key", *_CREDENTIAL_KINDS) for kind in secrets) or _SK_KEY.search(text):
        reasons.append("api_key")
    if any(kind in _CREDENTIAL_KINDS for kind in secrets) or _CREDENTIAL.search(text):
        reasons.append("credential_like_string")
    lines = text.splitlines()
    if text.count("```") >= 4 or sum(len(line) > LONG_LINE for line in lines) > MAX_LONG_LINES:
        reasons.append("large_code_block")
    if len(text) > MAX_CHARS or sum(bool(_ROLE_LINE.match(line)) for line in lines) > MAX_ROLE_LINES:
        reasons.append("raw_transcript_like")
    if _REASONING_TAG.search(text) or sum(bool(_REASONING_LINE.match(line)) for line in lines) > MAX_REASONING_LINES:
        reasons.append("reasoning_dump")
    return reasons


def enforce_writeback_firewall(rows: list[tuple[str, str, str]]) -> None:
    """rows: (memory type, request path, text). Raises UnsafeWriteback listing every reason of every row."""
    unsafe = [{"reason": reason, "memory_type": memory_type, "path": path}
              for memory_type, path, text in rows for reason in unsafe_reasons(text)]
    if unsafe:
        raise UnsafeWriteback(unsafe[:50])
