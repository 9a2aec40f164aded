"""IndexedMemoryStore: DynamoDB (moto) is the truth, OpenSearch (recorded or scripted exchanges) finds candidates.

The recorded exchanges (tests/contract/recordings/memory_*.json) pin the DSL the memory index sends: eligibility
inside the kNN filter, the over-fetch size, the multi_match fields; their responses are replayed as recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.aws.dynamodb.memory.match import is_eligible
from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.adapters.aws.opensearch.indexed_memory import MIN_CANDIDATES, PENDING_WINDOW_S, IndexedMemoryStore
from agentkb.adapters.aws.opensearch.memory import OpenSearchMemoryIndex, memory_index_body
from agentkb.adapters.aws.opensearch.transport import HttpResponse, JsonClient
from agentkb.errors import DependencyError, ServiceUnavailable
from agentkb.models.memory.api import VISIBILITY_RANK
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv
from testkit.scripted_opensearch import Scripted, decode, empty
from tests.memory_records import MATRIX, NOW, SCOPES, WS, record, scope, unit

RECORDINGS = Path(__file__).parents[3] / "contract" / "recordings"
INDEX = "/agentkb-memories-4"


class Replay:
    """Recorded exchanges: each request must equal a recorded one (asserted), whose response is replayed."""

    def __init__(self, *names: str) -> None:
        self.exchanges = [e for n in names for e in json.loads((RECORDINGS / f"{n}.json").read_text())["exchanges"]]

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        sent = {"method": method, "path": path, "body": decode(path, body)}
        for position, exchange in enumerate(self.exchanges):
            if exchange["request"] == sent:
                self.exchanges.pop(position)
                return HttpResponse(exchange["response"]["status"], json.dumps(exchange["response"]["body"]).encode())
        raise AssertionError(f"unrecorded request: {json.dumps(sent)[:3000]}")


def _hits(*ids: int) -> dict[str, Any]:
    return {"hits": {"hits": [{"_id": f"x{i}", "_score": 1.0 - i / 100, "_source": {"memory_id": i}} for i in ids]}}


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _store(aws: AwsEnv, transport: Any, clock: Clock | None = None) -> IndexedMemoryStore:
    truth = DynamoDbMemoryStore(lambda: aws_client("dynamodb", REGION), aws.tables["memory"])
    client = JsonClient(transport, sleep=lambda _: None, max_call_s=0.05)
    return IndexedMemoryStore(truth, OpenSearchMemoryIndex(client, prefix="agentkb", generation="classic"),
                              clock=clock or Clock())


def _seed(aws: AwsEnv, records: list[Any]) -> None:
    """Memories written (and indexed) long ago: no pending markers."""
    DynamoDbMemoryStore(lambda: aws_client("dynamodb", REGION), aws.tables["memory"]).insert_many(records)


def _markers(aws: AwsEnv) -> list[str]:
    items = aws.client("dynamodb").query(
        TableName=aws.tables["memory"], KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
        ExpressionAttributeValues={":pk": {"S": f"MW#{WS}"}, ":p": {"S": "P#"}})["Items"]
    return [i["sk"]["S"] for i in items]


RECORDED_SCOPE = scope(project_id="pa", channel_id="cx", since=NOW - 86400, allowed_sensitivity=1)


# ---- the DSL, pinned by recorded exchanges ---------------------------------------------------------------------

def test_vector_leg_sends_eligibility_inside_the_knn_filter_and_over_fetches(aws: AwsEnv) -> None:
    # Given memories 1-3 in DynamoDB and the recorded kNN answer [3, 1, 2]
    store = _store(aws, Replay("memory_vector_search"))
    _seed(aws, [record("a", embedding=unit(1, 0, 0, 0)), record("b", embedding=unit(1, 1, 0, 0)),
                record("c", project_id="pb", visibility="project", embedding=unit(1, 0.1, 0, 0))])
    # When recall asks for 3 (the recorded request: size = k = 40 = MIN_CANDIDATES, the filter inside the knn)
    hits = store.vector_search(RECORDED_SCOPE, unit(1, 0, 0, 0), 3)
    # Then memory 3 (project pb, not the request's project) is dropped by the DynamoDB re-check; scores are exact
    assert [i for i, _ in hits] == [1, 2] and abs(hits[0][1] - 1.0) < 1e-6
    assert MIN_CANDIDATES == 40


def test_lexical_leg_is_a_multi_match_over_weighted_fields_with_the_same_filter(aws: AwsEnv) -> None:
    store = _store(aws, Replay("memory_lexical_search"))
    _seed(aws, [record("billing", body="unrelated"), record("deploys", body="billing deploys"),
                record("other", body="billing")])
    hits = store.lexical_search(RECORDED_SCOPE, "billing deploys", 3)
    assert [i for i, _ in hits] == [2, 3] and hits[0][1] == 1.0 and 0 < hits[1][1] < 1  # BM25 / best BM25


def test_the_memory_mapping_carries_the_eligibility_facets_and_the_generation_rules() -> None:
    classic = memory_index_body(1024, "classic")["mappings"]["properties"]
    nextgen = memory_index_body(1024, "nextgen")["mappings"]["properties"]
    assert classic["embedding"]["method"] == {"name": "hnsw", "space_type": "cosinesimil", "engine": "faiss",
                                              "parameters": {"m": 16, "ef_construction": 128}}
    assert "engine" not in json.dumps(nextgen["embedding"]) and nextgen["embedding"]["dimension"] == 1024
    assert {classic[f]["type"] for f in ("name", "description", "body")} == {"text"}
    assert all(classic[f]["type"] == "keyword" for f in ("workspace_id", "project_id", "channel_id", "owner_id"))
    assert all(classic[f]["type"] in ("integer", "long", "double") for f in (
        "memory_id", "vis_rank", "sensitivity", "confirmed", "stale", "superseded", "valid_until", "updated_at"))


# ---- eligibility: the re-check is exactly the DynamoDB filter ---------------------------------------------------

def test_the_python_recheck_equals_the_filter_expression(aws: AwsEnv) -> None:
    truth = DynamoDbMemoryStore(lambda: aws_client("dynamodb", REGION), aws.tables["memory"])
    truth.insert_many(MATRIX)
    items = truth.items(WS, range(1, len(MATRIX) + 1), "V#")
    for sc in SCOPES:
        expected = {i for i, _ in truth.vector_search(sc, unit(1, 0, 0, 0), 100)}
        assert {i for i, item in items.items() if item and sc.workspace_id == WS and is_eligible(item, sc)} \
            == expected, sc


# ---- writes: DynamoDB first, markers, index failures ------------------------------------------------------------

def test_a_write_indexes_the_truth_and_leaves_an_indexed_marker(aws: AwsEnv) -> None:
    transport = Scripted(lambda m, p, b: (404, None) if m == "HEAD" else (200, empty(p)))
    store = _store(aws, transport)
    memory_id = store.insert(record("runbook")).memory_id
    methods = [(m, p) for m, p, _ in transport.sent]
    assert methods == [("HEAD", INDEX), ("PUT", INDEX), ("POST", f"{INDEX}/_search"), ("POST", f"{INDEX}/_bulk")]
    lookup, bulk = transport.sent[2][2], transport.sent[3][2]
    assert lookup["query"] == {"bool": {"filter": [{"term": {"workspace_id": WS}},
                                                   {"terms": {"memory_id": [memory_id]}}]}}
    assert bulk[0] == {"index": {"_index": "agentkb-memories-4"}}
    assert bulk[1]["memory_id"] == memory_id and bulk[1]["workspace_id"] == WS and bulk[1]["superseded"] == 0
    assert bulk[1]["name"] == "runbook" and len(bulk[1]["embedding"]) == 4 and "project_id" not in bulk[1]
    assert _markers(aws) == [f"P#{int(NOW * 1000):013d}#{memory_id:012d}"]  # indexed at NOW, pending till +120 s


def test_a_new_revision_replaces_the_old_revisions_document_with_a_superseded_one(aws: AwsEnv) -> None:
    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path.endswith("/_search"):
            return 200, {"hits": {"hits": [{"_id": "old-doc", "sort": [1]}]}}
        return 200, empty(path)

    transport = Scripted(answer)
    store = _store(aws, transport)
    store.insert(record("runbook"))
    store.insert(record("runbook", body="v2", request_hash="h2"))
    bulk = transport.sent[-1][2]
    assert bulk[0] == {"delete": {"_index": "agentkb-memories-4", "_id": "old-doc"}}
    assert [(d["memory_id"], d["superseded"]) for d in bulk[2::2]] == [(2, 0), (1, 1)]


def test_an_index_failure_on_write_keeps_the_write_and_recall_finds_it_from_dynamodb(aws: AwsEnv) -> None:
    clock = Clock()
    down = Scripted(lambda m, p, b: (503, None))
    store = _store(aws, down, clock)
    # When OpenSearch is down the write still succeeds (DynamoDB is the commit point)
    memory_id = store.insert(record("incident", body="the billing queue stalled")).memory_id
    assert _markers(aws) == [f"P#~{memory_id:012d}"]
    # Then, long after the refresh window and with an index that knows nothing, recall still finds it
    clock.now += 10 * PENDING_WINDOW_S
    store.index.client.transport = Scripted(lambda m, p, b: (200, empty(p)))
    assert [i for i, _ in store.vector_search(scope(now=clock.now), unit(1, 0, 0, 0), 5)] == [memory_id]
    assert [i for i, _ in store.lexical_search(scope(now=clock.now), "billing queue", 5)] == [memory_id]
    # And the next successful write repairs it: both memories indexed, markers now time-bounded
    second = store.insert(record("other")).memory_id
    indexed = [d["memory_id"] for _m, p, body in store.index.client.transport.sent if p.endswith("/_bulk")
               for d in body[1::2]]
    assert indexed == [second, memory_id]
    assert all(not m.startswith("P#~") for m in _markers(aws))


def test_repair_and_reindex_resync_the_index_from_dynamodb(aws: AwsEnv) -> None:
    store = _store(aws, Scripted(lambda m, p, b: (500, None)))
    store.insert_many([record("a"), record("b"), record("c")])
    assert store.truth.unindexed(WS) == [1, 2, 3]
    up = Scripted()
    store.index.client.transport = up
    assert store.repair(WS) == 3 and store.truth.unindexed(WS) == []
    assert store.reindex(WS) == 3
    assert sum(len(body) // 2 for _m, p, body in up.sent if p.endswith("/_bulk")) == 6


# ---- reads: read-after-write, re-check, errors ------------------------------------------------------------------

def test_read_after_write_a_just_written_memory_is_found_while_the_index_returns_nothing(aws: AwsEnv) -> None:
    clock = Clock()
    store = _store(aws, Scripted(), clock)  # accepts writes, shows nothing (the refresh lag)
    memory_id = store.insert(record("fresh", body="rotate the signing keys")).memory_id
    assert [i for i, _ in store.vector_search(scope(), unit(1, 0, 0, 0), 5)] == [memory_id]
    assert store.lexical_search(scope(), "signing keys", 5) == [(memory_id, 1.0)]
    clock.now += PENDING_WINDOW_S + 1  # past the window the index is trusted to show it
    assert store.vector_search(scope(now=clock.now), unit(1, 0, 0, 0), 5) == []


def test_a_superseded_memory_the_index_still_returns_is_dropped_by_the_recheck(aws: AwsEnv) -> None:
    clock = Clock()
    store = _store(aws, Scripted(lambda m, p, b: (200, _hits(1, 2) if p.endswith("/_search") and "size" in b
                                                   and "sort" not in b else empty(p))), clock)
    store.insert(record("runbook", embedding=unit(1, 0, 0, 0)))
    store.insert(record("runbook", body="v2", request_hash="h2", embedding=unit(1, 1, 0, 0)))
    clock.now += 3600  # nothing pending: only the index answers, and it still says revision 1 is live
    assert [i for i, _ in store.vector_search(scope(now=clock.now), unit(1, 0, 0, 0), 5)] == [2]
    assert [i for i, _ in store.vector_search(scope(now=clock.now, include_stale=True), unit(1, 0, 0, 0), 5)] \
        == [1, 2]


def test_the_over_fetch_grows_while_the_recheck_leaves_fewer_than_k(aws: AwsEnv) -> None:
    stale_ids = list(range(1, MIN_CANDIDATES + 1))

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path.endswith("/_search") and "knn" in body.get("query", {}):
            return 200, _hits(*(stale_ids if body["size"] == MIN_CANDIDATES else [*stale_ids, 41]))
        return 200, empty(path)

    transport = Scripted(answer)
    store = _store(aws, transport, Clock(NOW + 3600))
    _seed(aws, [record(f"s{i}", stale=True) for i in stale_ids] + [record("live")])
    assert [i for i, _ in store.vector_search(scope(now=NOW + 3600), unit(1, 0, 0, 0), 1)] == [41]
    sizes = [b["size"] for _m, p, b in transport.sent if p.endswith("/_search")]
    assert sizes == [MIN_CANDIDATES, 4 * MIN_CANDIDATES]


@pytest.mark.parametrize("status", [429, 500, 503])
def test_opensearch_throttling_on_read_is_the_document_index_503(aws: AwsEnv, status: int) -> None:
    store = _store(aws, Scripted(lambda m, p, b: (status, None)))
    with pytest.raises(ServiceUnavailable) as caught:
        store.vector_search(scope(), unit(1, 0, 0, 0), 5)
    assert caught.value.http_status == 503 and caught.value.headers["Retry-After"] == "5"
    _seed(aws, [record("a")])
    with pytest.raises(ServiceUnavailable):
        store.lexical_search(scope(), "deploy", 5)


def test_a_broken_index_on_read_is_a_dependency_error_without_the_body(aws: AwsEnv) -> None:
    store = _store(aws, Scripted(lambda m, p, b: (400, {"error": {"type": "search_phase_execution_exception",
                                                                  "reason": "secret memory text"}})))
    with pytest.raises(DependencyError) as caught:
        store.vector_search(scope(), unit(1, 0, 0, 0), 5)
    assert "search_phase_execution_exception" in str(caught.value) and "secret" not in str(caught.value)


def test_a_missing_memory_index_is_an_empty_leg(aws: AwsEnv) -> None:
    missing = {"error": {"type": "index_not_found_exception"}, "status": 404}
    store = _store(aws, Scripted(lambda m, p, b: (404, missing)), Clock(NOW + 3600))
    assert store.vector_search(scope(now=NOW + 3600), unit(1, 0, 0, 0), 5) == []


def test_linked_memories_read_links_not_the_workspace(aws: AwsEnv) -> None:
    store = _store(aws, Scripted())
    _seed(aws, MATRIX)
    sc = scope(audience_rank=VISIBILITY_RANK["personal"])
    assert store.linked_memories(sc, ["e1", "e2"], 2) == [(11, "e1"), (1, "e1"), (5, "e2"), (1, "e2")]


# ---- wiring and the operator commands ---------------------------------------------------------------------------

def test_the_bundle_adds_the_memory_index_only_with_an_endpoint(aws_settings: AwsEnv,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.composition import get_ports, reset_ports
    from agentkb.config import reset_settings

    assert isinstance(get_ports().memories, IndexedMemoryStore)
    monkeypatch.delenv("AGENTKB_OPENSEARCH_ENDPOINT")
    reset_settings()
    reset_ports()
    assert type(get_ports().memories) is DynamoDbMemoryStore


def test_the_memory_cli_repairs_and_reindexes(aws_settings: AwsEnv, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from agentkb.adapters.aws.opensearch import transport as aws_http
    from agentkb.cli.main import main
    from agentkb.composition import get_ports

    broken = {"error": {"type": "security_exception"}}
    collection = Scripted(lambda m, p, b: (403, broken))  # the index refuses writes: DependencyError, no retries
    monkeypatch.setattr(aws_http, "SigV4Transport", lambda endpoint, region: collection)
    store = get_ports().memories
    ids = [store.insert(record(name)).memory_id for name in ("a", "b")]
    assert store.truth.unindexed(WS) == ids
    assert main(["memory", "repair", "--workspace", WS]) == 1  # still refused: exit 1, nothing lost
    collection.answer = lambda m, p, b: (200, empty(p))
    assert main(["memory", "repair", "--workspace", WS]) == 0
    assert main(["memory", "reindex", "--workspace", WS]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["command"], r["indexed"], r["unindexed"]) for r in lines if "workspace_id" in r] == [
        ("repair", 0, 2), ("repair", 2, 0), ("reindex", 2, 0)]


def test_with_an_index_that_ignores_every_filter_the_recheck_alone_gives_the_dynamodb_answers(aws: AwsEnv) -> None:
    # Given an index that returns every memory of the matrix for any query (filters ignored, newest first)
    everything = _hits(*range(len(MATRIX), 0, -1))
    store = _store(aws, Scripted(lambda m, p, b: (200, everything if p.endswith("/_search") else empty(p))),
                   Clock(NOW + 3600))
    _seed(aws, MATRIX)
    query = unit(1, 0.25, 0.1, 0)
    for sc in SCOPES:  # Then the re-check and exact scoring reproduce the DynamoDB-only engine, lift included
        assert store.vector_search(sc, query, 50) == store.truth.vector_search(sc, query, 50), sc
        assert store.vector_search(sc, query, 3, {5: 0.5, 11: 0.5}) == \
            store.truth.vector_search(sc, query, 3, {5: 0.5, 11: 0.5}), sc


def test_a_memory_id_names_a_memory_within_its_workspace_in_the_index() -> None:
    """An import keeps an archive's memory ids, which another workspace of the stack may hold (DynamoDB keys them
    per workspace): writing or forgetting one workspace's memory leaves the other's document in the index."""
    from testkit.fake_opensearch import FakeOpenSearch

    index = OpenSearchMemoryIndex(JsonClient(FakeOpenSearch(), sleep=lambda _: None), prefix="agentkb",
                                  generation="classic")

    def document(ws: str, body: str) -> dict[str, Any]:
        return {"memory_id": 7, "workspace_id": ws, "name": "runbook", "description": "", "body": body,
                "embedding": [1.0, 0.0, 0.0, 0.0], "vis_rank": 0, "sensitivity": 0, "confirmed": 1, "stale": 0,
                "superseded": 0, "updated_at": NOW}

    def found(ws: str) -> list[tuple[int, str]]:
        _, answer = index.client.call("POST", f"{INDEX}/_search", {"size": 10, "query": {"bool": {"filter": [
            {"term": {"workspace_id": ws}}]}}}, operation="test")
        return [(h["_source"]["memory_id"], h["_source"]["body"]) for h in answer["hits"]["hits"]]

    index.replace(4, [document("ws-a", "deploy from ws-a")])
    index.replace(4, [document("ws-b", "deploy from ws-b")])
    index.replace(4, [document("ws-b", "deploy again from ws-b")])  # a new revision replaces only ws-b's
    assert found("ws-a") == [(7, "deploy from ws-a")] and found("ws-b") == [(7, "deploy again from ws-b")]
    index.remove(4, "ws-b", [7])
    assert found("ws-a") == [(7, "deploy from ws-a")] and found("ws-b") == []
