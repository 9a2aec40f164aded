"""The one secret detector: detect-secrets' keyword, high-entropy and provider plugins, under our thin rules.

Used by the memory firewall, the OB1 write-back and review firewall, and document ingest (chunk provenance).
detect-secrets runs in-process: its plugins are built once from a transient settings context and called line by
line, with no verification (no network) and no files. Our rules add the provider shapes it lacks (Slack xapp-/xoxc-,
github_pat_, Google AIza, newer OpenAI keys, PEM headers in any case or spacing, unquoted high-entropy tokens such
as an AWS secret in prose) and drop its high-entropy hits on obvious non-secrets (hex digests and git SHAs, UUIDs,
base64 data URIs). Findings carry a kind and a line number, never the secret. detect-secrets is imported on the
first scan, so functions that never scan (search, recall, snapshot) never load it.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

# detect-secrets' secret types -> our finding kinds (stable names: they appear in 422 details).
_KINDS = {
    "AWS Access Key": "aws_access_key_id", "Private Key": "private_key", "GitHub Token": "github_token",
    "GitLab Token": "gitlab_token", "Slack Token": "slack_token", "Stripe Access Key": "stripe_key",
    "JSON Web Token": "jwt", "OpenAI Token": "openai_key", "Basic Auth Credentials": "password_in_url",
    "Secret Keyword": "credential_assignment", "Base64 High Entropy String": "high_entropy_string",
    "Hex High Entropy String": "high_entropy_string",
}
_PLUGINS = (
    "ArtifactoryDetector", "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "CloudantDetector",
    "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector", "IbmCloudIamDetector",
    "IbmCosHmacDetector", "JwtTokenDetector", "MailchimpDetector", "NpmDetector", "OpenAIDetector",
    "PrivateKeyDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector", "SoftlayerDetector",
    "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector", "KeywordDetector",
)
_ENTROPY_PLUGINS: tuple[dict[str, Any], ...] = (
    {"name": "Base64HighEntropyString", "limit": 4.5}, {"name": "HexHighEntropyString", "limit": 3.0})
# The keyword plugin reads unquoted `name = value` / `name: value` in config-like files: documents are prose.
_AS_CONFIG = "document.cfg"

# Our provider shapes (documented formats detect-secrets 1.5 does not know).
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(p)) for kind, p in (
    ("private_key", r"(?i)-{3,}\s*BEGIN\s+(?:[A-Z0-9]+\s+)*PRIVATE\s+KEY(?:\s+BLOCK)?\s*-{3,}"),
    ("github_token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}"),
    ("slack_token", r"\bxox[a-z]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|ant-[a-z0-9]+-)[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
))
# An unquoted token of the base64/url-safe alphabet, long enough to be a key (AWS secrets are 40).
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{32,128}={0,2}(?![A-Za-z0-9+/=_\-])")
_HEX = re.compile(r"^(?:sha\d*[:=-])?[0-9a-fA-F]+$")
_DATA_URI = re.compile(r"base64,\s*$")
_IN_URL = re.compile(r"://\S*$")
_REFERENCE = re.compile(r"^[a-z_][a-z0-9_.]*[()\[\]]*$")
_PLACEHOLDER = re.compile(r"^(?:\$\{?|\{\{|<|%|\*{3,}|x{6,}|\.\.\.)|(?:REDACTED|redacted|example|EXAMPLE|changeme)")
TOKEN_ENTROPY_BITS = 4.5  # the Base64HighEntropyString plugin's default limit, for unquoted tokens
VALUE_ENTROPY_BITS = 3.0  # a keyword value below this is a word ("changeme" 2.75), not a credential
_LOCK = threading.Lock()


@dataclass(frozen=True)
class SecretFinding:
    """One detected secret: its kind and 1-based line, never its value."""

    kind: str
    line: int


def shannon_entropy(text: str) -> float:
    """Bits per character of a string's own character distribution."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


def _classes(value: str) -> int:
    return sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))


@cache
def _engine() -> tuple[tuple[Any, ...], Any]:
    """detect-secrets' plugin instances (built once, under a lock: its settings are process-global)."""
    with _LOCK:
        from detect_secrets.core.plugins.initialize import from_plugin_classname
        from detect_secrets.filters import heuristic
        from detect_secrets.settings import transient_settings

        used: list[dict[str, Any]] = [{"name": n} for n in _PLUGINS] + list(_ENTROPY_PLUGINS)
        with transient_settings({"plugins_used": used}):
            plugins: tuple[Any, ...] = tuple(from_plugin_classname(str(p["name"])) for p in used)
        return plugins, heuristic


def _false_positive(kind: str, value: str, line: str, heuristic: Any) -> bool:
    """detect-secrets' own heuristic filters plus our allowlist (hashes, UUIDs, templates, placeholders)."""
    if (heuristic.is_sequential_string(value) or heuristic.is_potential_uuid(value)
            or heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_indirect_reference(line)):
        return True
    if kind == "high_entropy_string":
        return bool(_HEX.match(value)) or _classes(value) < 3
    if kind == "credential_assignment":  # a word, a placeholder or a code reference (`secret_id)`) is no secret
        return (bool(_PLACEHOLDER.search(value) or _REFERENCE.match(value)) or any(c.isspace() for c in value)
                or shannon_entropy(value) < VALUE_ENTROPY_BITS or _classes(value) + (not value.isalnum()) < 2)
    return False


def _unquoted_tokens(line: str) -> list[str]:
    """High-entropy unquoted tokens (an AWS secret in prose), minus data URIs and digests."""
    found = []
    for match in _TOKEN.finditer(line):
        value = match.group(0)
        before = line[:match.start()]
        if _DATA_URI.search(before) or _IN_URL.search(before) or _HEX.match(value) or _classes(value) < 3:
            continue
        if shannon_entropy(value) >= TOKEN_ENTROPY_BITS:
            found.append(value)
    return found


def scan_line(line: str) -> set[str]:
    """Kinds of secret on one line of text."""
    plugins, heuristic = _engine()
    kinds = {kind for kind, pattern in _RULES if pattern.search(line)}
    for plugin in plugins:
        for secret in plugin.analyze_line(filename=_AS_CONFIG, line=line, line_number=1):
            kind = _KINDS.get(secret.type, "provider_token")
            if not _false_positive(kind, secret.secret_value or "", line, heuristic):
                kinds.add(kind)
    if _unquoted_tokens(line):
        kinds.add("high_entropy_string")
    return kinds


def scan_text(text: str) -> list[SecretFinding]:
    """Every (kind, line) of secret in a text, in line order (empty when clean)."""
    return [SecretFinding(kind, number) for number, line in enumerate(text.splitlines(), start=1)
            for kind in sorted(scan_line(line))]


def find_secrets(text: str) -> list[str]:
    """The distinct kinds of secret in a text (empty when clean)."""
    return sorted({finding.kind for finding in scan_text(text)})
