"""The regex firewall issue 23 replaced (services/memory_firewall.py at 4794cdc), kept to compare against."""

from __future__ import annotations

import math
import re
from collections import Counter

# (finding kind, pattern). Patterns are anchored on vendor prefixes so ordinary prose never matches.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(p)) for kind, p in (
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("aws_secret_access_key", r"(?i)aws[\w.\- ]{0,20}?(?:secret|key)[\w.\- ]{0,20}?[\"']?\s*(?:=|:|=>)\s*[\"']?"
                              r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("gitlab_token", r"\bgl(?:pat|dt|ptt|rt|cbt|oas)-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|ant-[a-z0-9]+-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
))
_ASSIGNMENT = re.compile(
    r"(?i)\b(?:password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key"
    r"|access[_-]?token|auth[_-]?token|private[_-]?key|token)\b[\"']?\s*(?:=|:|=>)\s*[\"']?([^\s\"'`,;]{8,})")
MIN_ENTROPY_BITS = 3.0  # per character: "changeme" (2.75) passes, "hG7#kq2!Lp9z" (3.6) does not
_PLACEHOLDER = re.compile(r"^(?:\$\{?|\{\{|<|%|\*{3,}|x{6,}|\.\.\.)|(?:REDACTED|redacted|example|EXAMPLE)")


def shannon_entropy(text: str) -> float:
    """Bits per character of a string's own character distribution."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _looks_random(value: str) -> bool:
    """High entropy and at least two character classes (a run of letters is a word, not a key)."""
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit,
                                                          lambda c: not c.isalnum()))
    return classes >= 2 and shannon_entropy(value) >= MIN_ENTROPY_BITS


def find_secrets(text: str) -> list[str]:
    """Kinds of credential found in a text (empty when clean)."""
    kinds = [kind for kind, pattern in _PATTERNS if pattern.search(text)]
    for match in _ASSIGNMENT.finditer(text):
        value = match.group(1)
        if not _PLACEHOLDER.search(value) and _looks_random(value):
            kinds.append("credential_assignment")
            break
    return kinds


