"""The OB1 Agent Memory API and the /v1 memory surface with AGENTKB_BACKEND=aws, through the real ingest handler:
DynamoDB (moto) holds memories, traces and usage; the memory legs run on the in-memory OpenSearch; embeddings
come from the fake Bedrock. The same client flows as the embedded suite (tests/ob1_flows.py)."""

from __future__ import annotations

import pytest

from testkit.aws_backend import AwsBackend
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


class _Crash(BaseException):
    """A writer process that dies mid-write."""


def test_a_duplicate_of_a_writeback_still_being_stored_answers_409_with_retry_after(
        minter: ob1_flows.Mint, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.adapters.aws.dynamodb.memory import staging
    from tests.ob1_client import Ob1Client
    from tests.ob1_flows import RW
    from tests.ob1_flows_limits import largest_payload

    c = Ob1Client(minter(["dup"], RW, "dup-agent"))
    payload = largest_payload("dup", "d1", staging.CHUNK + 6)  # staged: more than one transaction
    real_write, calls = staging.DynamoDbMemoryStaging.write, []

    def dies_after_the_first_chunk(self: object, *args: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise _Crash
        return real_write(self, *args)  # type: ignore[arg-type]

    # Given a write-back whose writer is still inside its stage (here: stopped there, within the lease)
    monkeypatch.setattr(staging.DynamoDbMemoryStaging, "write", dies_after_the_first_chunk)
    with pytest.raises(_Crash):
        c.call("POST", "/writeback", payload)
    monkeypatch.setattr(staging.DynamoDbMemoryStaging, "write", real_write)
    # When the same write-back arrives again, it is refused with 409, Retry-After and a message saying why
    code, answer, headers = c.call("POST", "/writeback", payload)
    assert code == 409 and headers.get("retry-after") == "2"
    assert answer["error"]["code"] == "CONFLICT" and "still being stored" in answer["error"]["message"]
    assert answer["error"]["details"] == {"reason": "in_progress"}
    assert c.ok("GET", "/memories?workspace_id=dup&limit=200")["count"] == 0
    # And once the stage is past its lease (its writer is gone), the retry stores the write-back whole
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    assert len(c.ok("POST", "/writeback", payload)["memories"]) == staging.CHUNK + 6
