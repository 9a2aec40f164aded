"""What a verified access token's claims grant: its audience check, its scopes and the workspaces it reaches.

Identity providers disagree on the shapes, so each is read in the forms they use:
- audience: `aud` (a string or an array); Cognito access tokens carry no `aud`, only `client_id` (then that).
- scopes: `scope` (space-separated, RFC 8693/9068) or `scp` (an array: Okta; a space-separated string: Entra ID).
  Cognito prefixes custom scopes with the resource server (`agentkb/api:read`): AGENTKB_OIDC_SCOPE_PREFIX strips
  it. Only agentkb's own scopes are kept; `openid`, `profile` and the like grant nothing here.
- workspaces: the configured claim (default `workspaces`), an array of ids or one space/comma-separated string.
  A token never reaches every workspace: `*` is dropped (only a key minted by an operator can hold it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from agentkb.services.access.api_keys import SCOPES

MAX_SUB_CHARS = 256
MAX_WORKSPACES = 256
_SEPARATORS = re.compile(r"[\s,]+")


def _words(value: Any) -> list[str]:
    if isinstance(value, str):
        return [w for w in _SEPARATORS.split(value) if w]
    if isinstance(value, list):
        return [w for w in value if isinstance(w, str) and w]
    return []


def audience_matches(claims: dict[str, Any], audience: str) -> bool:
    aud = claims.get("aud")
    if aud is None:
        return claims.get("client_id") == audience
    return audience in (aud if isinstance(aud, list) else [aud])


def scopes_of(claims: dict[str, Any], prefix: str = "", known: Iterable[str] = SCOPES) -> tuple[str, ...]:
    granted = set(_words(claims.get("scope")))
    scp = claims.get("scp")
    granted.update(scp.split() if isinstance(scp, str) else _words(scp))
    if prefix:
        granted = {s[len(prefix):] if s.startswith(prefix) else s for s in granted}
    return tuple(sorted(granted & set(known)))


def workspaces_of(claims: dict[str, Any], claim: str) -> tuple[str, ...]:
    reach = [w for w in _words(claims.get(claim)) if w != "*" and len(w) <= 128]
    return tuple(dict.fromkeys(reach[:MAX_WORKSPACES]))


def subject_of(claims: dict[str, Any]) -> str | None:
    sub = claims.get("sub")
    return sub if isinstance(sub, str) and 0 < len(sub) <= MAX_SUB_CHARS else None
