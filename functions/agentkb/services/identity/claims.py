"""What a verified access token's claims grant: its audience check, its scopes and the workspaces it reaches.

Identity providers disagree on the shapes, so each is read in the forms they use:
- audience: `aud` (a string or an array); Cognito access tokens carry no `aud`, only `client_id` (then that).
  AGENTKB_OIDC_AUDIENCE may list several, comma-separated (Cognito: one per app client).
- scopes: `scope` (space-separated, RFC 8693/9068) or `scp` (an array: Okta; a space-separated string: Entra ID).
  Cognito prefixes custom scopes with the resource server (`agentkb/api:read`): AGENTKB_OIDC_SCOPE_PREFIX strips
  it (and then only prefixed scopes count). Only agentkb's own scopes are kept; `openid`, `profile` and the
  like grant nothing here.
- workspaces: the configured claim (default `workspaces`), an array of ids or one space/comma-separated string.
  With the claim set to `scope`, workspaces travel as scopes `workspace:<id>` (for providers that cannot add a
  custom claim to a client-credentials token, such as Cognito without a pre-token-generation trigger).
  A token never reaches every workspace: `*` is dropped (only a key minted by an operator can hold it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from agentkb.services.access.api_keys import SCOPES

MAX_SUB_CHARS = 256
MAX_WORKSPACES = 256
WORKSPACE_SCOPE = "workspace:"
_SEPARATORS = re.compile(r"[\s,]+")


def _words(value: Any) -> list[str]:
    if isinstance(value, str):
        return [w for w in _SEPARATORS.split(value) if w]
    if isinstance(value, list):
        return [w for w in value if isinstance(w, str) and w]
    return []


def audience_matches(claims: dict[str, Any], audience: str) -> bool:
    accepted = {a.strip() for a in audience.split(",") if a.strip()}
    aud = claims.get("aud")
    if aud is None:
        return claims.get("client_id") in accepted
    return bool(accepted & set(aud if isinstance(aud, list) else [aud]))


def _scope_words(claims: dict[str, Any], prefix: str) -> set[str]:
    words = set(claims["scope"].split()) if isinstance(claims.get("scope"), str) else set()
    scp = claims.get("scp")
    words.update(scp.split() if isinstance(scp, str) else _words(scp))
    if not prefix:
        return words
    return {w[len(prefix):] for w in words if w.startswith(prefix)}  # with a prefix, only the prefixed count


def scopes_of(claims: dict[str, Any], prefix: str = "", known: Iterable[str] = SCOPES) -> tuple[str, ...]:
    return tuple(sorted(_scope_words(claims, prefix) & set(known)))


def workspaces_of(claims: dict[str, Any], claim: str, prefix: str = "") -> tuple[str, ...]:
    if claim in ("scope", "scp"):
        words = sorted(_scope_words(claims, prefix))
        reach = [w[len(WORKSPACE_SCOPE):] for w in words if w.startswith(WORKSPACE_SCOPE)]
    else:
        reach = _words(claims.get(claim))
    reach = [w for w in reach if w and w != "*" and len(w) <= 128]
    return tuple(dict.fromkeys(reach[:MAX_WORKSPACES]))


def subject_of(claims: dict[str, Any]) -> str | None:
    sub = claims.get("sub")
    return sub if isinstance(sub, str) and 0 < len(sub) <= MAX_SUB_CHARS else None
