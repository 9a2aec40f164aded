"""Tokens must not widen reach: the isolation properties of every route (test_isolation_routes.check_request)
held for callers holding OAuth access tokens from the dev issuer instead of keys, plus what a token's claims can
never grant (a `*` workspace, unknown scopes, another issuer's sub budget)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkb.models.domain import Principal
from agentkb.services.access.credentials import rate_identity
from agentkb.services.identity.dev_issuer import DevIssuer
from tests.helpers import body_of, rest_event
from tests.reliability.corpus import replay
from tests.reliability.test_isolation import PRINCIPALS, WORKSPACES
from tests.reliability.test_isolation import world as world  # noqa: PLC0414  (the seeded fixture, shared)
from tests.reliability.test_isolation_routes import AIMABLE, ROUTES, case_strategy, check_request

SETTINGS = settings(max_examples=40, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.filter_too_much, HealthCheck.data_too_large])


def bearer_caller(credential: str, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, str]:
    """The HTTP routes through the real handlers, the credential in `Authorization: Bearer` (a token, or the
    owner's key that check_request mints to look at its workspace)."""
    template = next((r.path for r in ROUTES if r.method == method and r.pattern.match(path)), path)
    event = rest_event(method, path, body, query=query or None, resource=template,
                       headers={"Authorization": f"Bearer {credential}"})
    response = replay(event)
    return response["statusCode"], json.dumps(body_of(response), sort_keys=True)


@SETTINGS
@given(data=st.data(), op=st.sampled_from(AIMABLE), target=st.sampled_from(WORKSPACES),
       workspaces=st.sets(st.sampled_from(WORKSPACES), min_size=1, max_size=2).map(lambda s: tuple(sorted(s))),
       scopes=st.sampled_from([("api:read",), ("api:read", "api:write"), ("api:write",)]),
       principal=st.sampled_from(PRINCIPALS))
def test_every_route_keeps_to_the_tokens_workspaces(dev_issuer: DevIssuer, world: dict[str, Any],
                                                    data: st.DataObject, op: tuple[str, str], target: str,
                                                    workspaces: tuple[str, ...], scopes: tuple[str, ...],
                                                    principal: str) -> None:
    method, path = op
    case = data.draw(case_strategy(method, path), label="case")
    token = dev_issuer.mint(principal, list(scopes), list(workspaces))
    check_request(bearer_caller, world, token, set(workspaces), scopes, principal, method, case, target)


@pytest.mark.parametrize("op", AIMABLE, ids=lambda op: f"{op[0]} {op[1]}")
def test_a_wildcard_claim_and_unknown_scopes_reach_nothing_more(dev_issuer: DevIssuer, world: dict[str, Any],
                                                                op: tuple[str, str]) -> None:
    """`workspaces: ["ws-a", "*"]` and scopes like `admin` grant exactly what `["ws-a"]` and api:* grant."""
    method, path = op
    token = dev_issuer.mint("alice", ["api:read", "api:write", "admin", "api:*"], ["ws-a", "*"])

    @settings(max_examples=2, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=case_strategy(method, path))
    def one(case: Any) -> None:
        check_request(bearer_caller, world, token, {"ws-a"}, ("api:read", "api:write"), "alice", method, case, "ws-b")

    one()


def test_budgets_are_per_issuer_and_sub_and_apart_from_keys() -> None:
    def of(issuer: str | None, sub: str, key_id: str | None = None) -> str:
        return rate_identity(Principal(id=sub, workspaces=(), scopes=(), key_id=key_id, issuer=issuer), False)

    assert of("https://a.example", "alice") == of("https://a.example", "alice")
    assert of("https://a.example", "alice") != of("https://b.example", "alice")
    assert of("https://a.example", "alice") != of(None, "alice", "alice")
    assert of("https://a.example", "alice").startswith("oidc:")
