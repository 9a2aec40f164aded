"""The OB1 Agent Memory API and the /v1 memory surface on the embedded engine, through the real ingest handler
(the real local embedding model): every route, each client flow end to end (tests/ob1_flows.py)."""

from __future__ import annotations

import pytest

from agentkb.composition import Ports
from tests import ob1_flows, ob1_flows_limits
from tests.helpers import mint


@pytest.fixture()
def minter(bundle: Ports) -> ob1_flows.Mint:
    return lambda workspaces, scopes, principal: mint(bundle, workspaces, scopes, principal)


def test_smoke_flow(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_smoke(minter)


def test_idempotent_writeback_and_both_schema_families(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_idempotent_and_families(minter)


def test_isolation_between_workspaces_keys_and_scopes(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_isolation(minter)


def test_usage_feedback_moves_rank_within_bounds_on_both_recalls(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_feedback(minter, minter(["fb"], ["api:read"], "v1-reader"))


def test_v1_list_get_and_forget(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_v1_surface(minter)


def test_the_largest_writeback_is_whole_and_replays(minter: ob1_flows.Mint) -> None:
    ob1_flows_limits.flow_largest_writeback(minter)


def test_pages_stay_full_with_others_personal_memories_between(minter: ob1_flows.Mint) -> None:
    ob1_flows_limits.flow_owner_paging(minter)
