"""The memory firewall: refuse memories that carry credentials (422, nothing stored, the secret never echoed).

What counts as a credential is the one secret detector's answer (secret_detector.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentkb.errors import Unprocessable
from agentkb.services.secrets.detector import find_secrets


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}.{i}")


def scan_payload(payload: dict[str, Any]) -> list[dict[str, str]]:
    """Findings [{path, kind}] over every string of a request (paths and kinds only, never the value)."""
    return [{"path": path, "kind": kind} for path, text in _strings(payload, "") for kind in find_secrets(text)]


def enforce_firewall(payload: dict[str, Any]) -> None:
    """422 UNPROCESSABLE when any field carries a credential."""
    findings = scan_payload(payload)
    if findings:
        raise Unprocessable("The memory contains what looks like a credential; remove it and retry",
                            details={"code": "SECRET_DETECTED", "findings": findings[:20]})
