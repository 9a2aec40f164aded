"""Red-team finding of 2026-12-01 (issue 23): concurrent writes of one document name shared revisions.

Eight writers x ten writes of distinct contents to `POST .../documents` with the same `name`: all 80 answered 201
but only 61-78 distinct revisions came back (revision 3 went to three writers with three content hashes), each
write silently replacing the last. Writes of one name are serialised now: every acknowledged write has its own
revision and the highest one is what GET and search serve.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.handlers.test_search_handler import create_kb, search
from tests.helpers import body_of, invoke, rest_event

WRITERS, WRITES = 8, 10
ANIMALS = ("otter", "heron", "badger", "falcon", "walrus", "lynx", "marmot", "ibis")


@pytest.fixture()
def preemptive() -> Iterator[None]:
    """Threads switch every 50 us instead of every 5 ms: interleavings a loaded server sees come in every run."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(5e-5)
    yield
    sys.setswitchinterval(interval)


def write_concurrently(key: str, kb: str, name: str) -> list[tuple[int, Any, str]]:
    """Every writer's (status, body, content), the writers started together, each writing one after another."""
    start = threading.Barrier(WRITERS)
    answers: list[tuple[int, Any, str]] = []
    lock = threading.Lock()

    def writer(w: int) -> None:
        start.wait()
        for i in range(WRITES):
            content = f"Writer {w} write {i}: the {ANIMALS[w]} crosses river number {w * WRITES + i}."
            response = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents", {
                "workspaceId": "ws1", "name": name, "content": content}, key=key))
            with lock:
                answers.append((response["statusCode"], body_of(response), content))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    return answers


def assert_serialised(key: str, kb: str, answers: list[tuple[int, Any, str]]) -> None:
    """Every write acknowledged with its own revision; GET and search serve the highest one's content."""
    assert [status for status, _, _ in answers] == [201] * WRITERS * WRITES, [b for s, b, _ in answers if s != 201]
    revisions = [body["data"]["revision"] for _, body, _ in answers]
    assert len(set(revisions)) == WRITERS * WRITES  # no two acknowledged writes share a revision
    assert len({body["data"]["id"] for _, body, _ in answers}) == 1  # one document, however the first writes raced
    for w in range(WRITERS):  # a writer's own writes, one after another, get increasing revisions
        mine = [body["data"]["revision"] for _, body, content in answers if content.startswith(f"Writer {w} ")]
        assert mine == sorted(mine)
    _, last, content = max(answers, key=lambda a: a[1]["data"]["revision"])
    shown = invoke("ingest", rest_event("GET", f"/api/v2/knowledge/bases/{kb}/documents/{last['data']['id']}",
                                        key=key, query={"workspaceId": "ws1"}))
    assert (body_of(shown)["data"]["revision"], body_of(shown)["data"]["content"]) == (last["data"]["revision"],
                                                                                       content)
    status, payload, _ = search(key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "crosses river"})
    assert status == 200 and [r["content"] for r in payload["data"]["results"]] == [content]


def test_concurrent_writes_of_one_name_each_get_their_own_revision_and_the_highest_stays(rw_key: str,
                                                                                        preemptive: None) -> None:
    kb = create_kb(rw_key)
    assert_serialised(rw_key, kb, write_concurrently(rw_key, kb, "race.md"))
