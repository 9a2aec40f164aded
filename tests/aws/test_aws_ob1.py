"""The OB1 Agent Memory API and the /v1 memory surface with AGENTKB_BACKEND=aws, through the real ingest handler:
DynamoDB (moto) holds memories, traces and usage; the memory legs run on the in-memory OpenSearch; embeddings
come from the fake Bedrock. The same client flows as the embedded suite (tests/ob1_flows.py)."""

from __future__ import annotations

import pytest
from aws_backend import AwsBackend

from tests import ob1_flows, ob1_flows_limits


@pytest.fixture()
def minter(aws_backend: AwsBackend) -> ob1_flows.Mint:
    return lambda workspaces, scopes, principal: aws_backend.key(workspaces, scopes, principal)


def test_smoke_flow(minter: ob1_flows.Mint, aws_backend: AwsBackend) -> None:
    ob1_flows.flow_smoke(minter)
    assert any("-memories-" in name for name in aws_backend.opensearch.indexes)  # the memory legs served it


def test_idempotent_writeback_and_both_schema_families(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_idempotent_and_families(minter)


def test_isolation_between_workspaces_keys_and_scopes(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_isolation(minter)


def test_usage_feedback_moves_rank_within_bounds_on_both_recalls(minter: ob1_flows.Mint) -> None:
    ob1_flows.flow_feedback(minter, minter(["fb"], ["api:read"], "v1-reader"))


def test_v1_list_get_and_forget(minter: ob1_flows.Mint, aws_backend: AwsBackend) -> None:
    ids = ob1_flows.flow_v1_surface(minter)
    indexed = {d["memory_id"] for name, docs in aws_backend.opensearch.indexes.items() if "-memories-" in name
               for d in docs.values()}
    assert int(ids[0]) not in indexed and {int(i) for i in ids[1:]} <= indexed  # forgotten in the index too


def test_the_largest_writeback_is_whole_and_replays(minter: ob1_flows.Mint) -> None:
    ob1_flows_limits.flow_largest_writeback(minter)


def test_pages_stay_full_with_others_personal_memories_between(minter: ob1_flows.Mint) -> None:
    ob1_flows_limits.flow_owner_paging(minter)
