"""Abuse: oversized, deep, malformed and hostile inputs get a clean 4xx (or a correct 200), never a 500; keys are
compared in constant time and stored only as hashes; keys and request bodies never reach the logs."""

from __future__ import annotations

import base64
import hmac
import json
import logging
from typing import Any

import pytest

from agentkb.api import gate
from agentkb.api.observability import logger as powertools_logger
from agentkb.composition import Ports
from tests.helpers import body_of, embedded_db, response_headers, rest_event
from tests.reliability.corpus import KB, WS, replay, seed

SEARCH = "/api/v2/knowledge/search"


@pytest.fixture()
def key(bundle: Ports) -> str:
    return seed(bundle)["akb_test_replay_key"]


def post(key: str | None, raw: str, path: str = SEARCH, **kwargs: Any) -> tuple[int, Any]:
    response = replay(rest_event("POST", path, None, key=key, raw_body=raw, **kwargs))
    return response["statusCode"], body_of(response)


def search(key: str, **body: Any) -> tuple[int, Any]:
    return post(key, json.dumps({"workspaceId": WS, "knowledgeBaseIds": [KB], **body}))


class _NoParsing:
    def __getattr__(self, name: str) -> Any:
        return getattr(json, name)

    @staticmethod
    def loads(*_: Any, **__: Any) -> Any:
        raise AssertionError("the JSON parser was called on an oversized body")


class _NoDecoding:
    def __getattr__(self, name: str) -> Any:
        return getattr(base64, name)

    @staticmethod
    def b64decode(*_: Any, **__: Any) -> Any:
        raise AssertionError("an oversized base64 body was decoded")


@pytest.mark.parametrize("path", [SEARCH, "/v1/recall", "/v1/snapshots", "/v1/memories", "/v1/graph"])
def test_over_2_mib_is_413_before_any_parsing(key: str, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gate, "json", _NoParsing())
    monkeypatch.setattr(gate, "base64", _NoDecoding())
    raw = json.dumps({"workspaceId": WS, "query": "x" * (2 * 1024 * 1024)})
    status, body = post(key, raw, path)
    assert status == 413 and body["error"]["code"] == "PAYLOAD_TOO_LARGE"
    for token in (None, "akb_nosuchkey_secret"):  # a missing or bad key is still a 401 first
        status, body = post(token, raw, path)
        assert status == 401 and body["error"]["code"] == "UNAUTHORIZED"
    big_b64 = base64.b64encode(raw.encode()).decode()
    event = rest_event("POST", path, None, key=key, raw_body=big_b64)
    event["isBase64Encoded"] = True
    response = replay(event)  # sized from the base64 length: never decoded
    assert response["statusCode"] == 413 and "x-ratelimit-remaining" in response_headers(response)


@pytest.mark.parametrize(("size", "over"), [(2 * 1024 * 1024, False), (2 * 1024 * 1024 + 1, True)])
@pytest.mark.parametrize("encoding", ["text", "base64", "multibyte", "declared"])
def test_the_size_is_judged_exactly_from_lengths(size: int, over: bool, encoding: str) -> None:
    limit = 2 * 1024 * 1024
    raw = b"x" * size
    if encoding == "multibyte":  # 3-byte characters: the byte length, not the character count, decides
        raw = "\u20ac".encode() * (size // 3) + b"x" * (size % 3)
    event: dict[str, Any] = {"headers": {}, "body": raw.decode(), "isBase64Encoded": False}
    if encoding == "base64":
        event.update(body=base64.b64encode(raw).decode(), isBase64Encoded=True)
    if encoding == "declared":  # the local gateway drains an oversized body and sends its declared length
        event.update(body=None, headers={"Content-Length": str(size)})
    assert gate.over_limit(event, limit) is over


@pytest.mark.parametrize(("raw", "why"), [
    ("[" * 100_000 + "]" * 100_000, "deep arrays"),
    ('{"a":' * 5_000 + "1" + "}" * 5_000, "deep objects"),
    ('{"workspaceId": "w", "topK": NaN}', "NaN"),
    ('{"workspaceId": "w", "topK": Infinity}', "Infinity"),
    ('{"workspaceId": "w", "topK": -Infinity}', "-Infinity"),
    ('{"workspaceId": "w", "workspaceId": "v"}', "duplicate keys"),
    ('{"workspaceId": "w"', "truncated"),
    ("", "empty"),
    ('"just a string"', "not an object"),
    ("\ufeff{}", "byte order mark"),
])
def test_malformed_json_is_a_clean_400(key: str, raw: str, why: str) -> None:
    status, body = post(key, raw)
    assert status == 400, (why, body)
    assert body["error"]["code"] == "BAD_REQUEST"
    assert not raw or raw[:20] not in json.dumps(body["error"].get("details", ""))  # never an echo of the input


def test_invalid_utf8_bytes_are_a_clean_400(key: str) -> None:
    event = rest_event("POST", SEARCH, None, key=key, raw_body=base64.b64encode(b'{"query": "\xff\xfe\xc3("}').decode())
    event["isBase64Encoded"] = True
    response = replay(event)
    assert response["statusCode"] == 400 and body_of(response)["error"]["code"] == "BAD_REQUEST"
    event["body"] = "not base64 at all!!"
    assert replay(event)["statusCode"] == 400
    lone_surrogate = rest_event("POST", SEARCH, None, key=key, raw_body='{"workspaceId": "\ud800", "query": "x"}')
    assert replay(lone_surrogate)["statusCode"] == 400


@pytest.mark.parametrize("value", ["1" + "0" * 5000, "1e400", "-1e400", "123456789012345678901234567890", "1.5",
                                   "true", "null", '"10"'])
def test_huge_or_mistyped_numbers_are_a_clean_400(key: str, value: str) -> None:
    prefix = json.dumps({"workspaceId": WS, "knowledgeBaseIds": [KB], "query": "q"})[:-1]
    status, body = post(key, f'{prefix}, "topK": {value}}}')
    assert status == 400, body


def test_wide_json_under_the_limit_is_a_bounded_400(key: str) -> None:
    wide = {"workspaceId": WS, "knowledgeBaseIds": [KB], "query": "q", **{f"x{i}": i for i in range(50_000)}}
    status, body = post(key, json.dumps(wide))
    assert status == 400 and len(body["error"]["details"]) <= 20  # issue list bounded, no echo


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_ten_thousand_term_query_is_answered(key: str, mode: str) -> None:
    query = " ".join(f"term{i} OR NEAR( \"x\" * - ^" for i in range(10_000))
    status, body = search(key, query=query, searchMode=mode)
    assert status in (200, 400), body


@pytest.mark.parametrize("query", ['"', "' OR 1=1 --", "NEAR(a b)", "a* AND b", "-", "*", "^x", "col:x", "\x00",
                                   "))) ((( ", "\u202e\u0000\ufffd"])
def test_fts_syntax_in_queries_never_breaks_search(key: str, query: str) -> None:
    status, body = search(key, query=query, searchMode="hybrid")
    assert status in (200, 400), body


HOSTILE = ["%", "_", "'; DROP TABLE chunks; --", ".*", "[a-z]+", "\\", "%_%", "' OR '1'='1"]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("operator", ["eq", "neq", "contains", "not_contains", "starts_with", "ends_with"])
def test_like_and_sql_metacharacters_in_tag_values_are_literal(key: str, bundle: Ports, value: str,
                                                               operator: str) -> None:
    # Given documents tagged "account" and "billing" (no metacharacters), When a filter uses a hostile value,
    # Then it matches literally: nothing for eq/contains/starts/ends, everything for neq/not_contains.
    status, body = search(key, tagFilters=[{"tagName": "category", "operator": operator, "value": value}])
    assert status == 200, body
    names = {r["documentName"] for r in body["data"]["results"]}
    assert names == ({"reset.md", "billing.md"} if operator in ("neq", "not_contains") else set())
    assert embedded_db(bundle).connection().execute("SELECT COUNT(*) FROM chunks").fetchone()[0] >= 2  # table intact


def test_tag_values_with_metacharacters_round_trip(key: str) -> None:
    path = f"/api/v2/knowledge/bases/{KB}/documents"
    for name, value in (("pct.md", "100%_done"), ("plain.md", "100xxdone")):
        status, body = post(key, json.dumps({"workspaceId": WS, "name": name, "content": f"Status {name}.",
                                             "tags": {"category": value}}), path)
        assert status == 201, body
    for operator, value, expected in (("contains", "%", {"pct.md"}), ("contains", "_", {"pct.md"}),
                                      ("starts_with", "100%", {"pct.md"}), ("ends_with", "_done", {"pct.md"}),
                                      ("eq", "100%_done", {"pct.md"}), ("contains", "0x", {"plain.md"})):
        status, body = search(key, tagFilters=[{"tagName": "category", "operator": operator, "value": value}])
        assert status == 200 and {r["documentName"] for r in body["data"]["results"]} == expected, (operator, value)


def test_keys_are_compared_in_constant_time(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentkb.services.access.api_keys as auth

    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", spy)
    assert search(key, query="password")[0] == 200
    assert calls, "the presented key was not compared with hmac.compare_digest"
    calls.clear()
    wrong = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    assert search(wrong, query="password")[0] == 401
    unknown_id = "akb_ffffffffffffffff_" + key.split("_", 2)[2]
    assert search(unknown_id, query="password")[0] == 401
    assert len(calls) == 2  # a digest is compared even for an unknown key id (no timing shortcut)
    assert all(len(a) == len(b) == 64 for a, b in calls)


def test_only_hashes_of_keys_are_stored(key: str, bundle: Ports, data_dir: Any) -> None:
    embedded_db(bundle).connection().execute("PRAGMA wal_checkpoint(FULL)")
    secret = key.split("_", 2)[2]
    for path in data_dir.rglob("*"):
        if path.is_file() and path.name != "dev-key":
            raw = path.read_bytes()
            assert key.encode() not in raw and secret.encode() not in raw, path


def test_keys_and_bodies_never_logged(key: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    powertools_logger.setLevel("DEBUG")
    caplog.set_level(logging.DEBUG)
    canary = "sk_live_CANARY0123456789abcdefSECRET"
    try:
        for body in ({"query": f"password {canary}"}, {"query": canary, "topK": 0}, {"query": canary, "bogus": 1}):
            assert search(key, **body)[0] in (200, 400)
        assert post(key[:-3] + "xyz", json.dumps({"query": canary}))[0] == 401
        assert post(key, json.dumps({"workspaceId": WS, "name": "n", "content": canary}),
                    f"/api/v2/knowledge/bases/{KB}/documents")[0] == 201
        response = replay(rest_event("POST", "/v1/memories", {"workspace_id": WS, "visibility": "workspace",
                                                              "type": "note", "name": "leak",
                                                              "body": f"token {canary} AKIAIOSFODNN7EXAMPLE"},
                                     key=key))
        assert response["statusCode"] in (400, 422) and canary not in response["body"]
        assert "x-ratelimit-limit" in response_headers(response)
    finally:
        powertools_logger.setLevel("INFO")
    out, err = capsys.readouterr()
    logged = out + err + caplog.text
    secret = key.split("_", 2)[2]
    assert secret not in logged and key not in logged
    assert canary not in logged
