"""Tool schemas every client reads right, and arguments as clients send them: integers are `{"type": "integer"}`
with their bounds (never `anyOf [integer, number]`), optional fields carry no `null` branch, and a clean integer
string (the MCP inspector's CLI, for one, sends a `--tool-arg` as a string unless the property's `type` says
otherwise) is taken as the integer it spells."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from agentkb.mcp.schemas import coerce_integers
from agentkb.mcp.tools import BY_NAME
from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import structured, text
from tests.e2e.mcp.test_mcp_tools import envelope, session

# A tag filter's value is a string, a number or a boolean by the tag's field type: the one place a union stays.
TAG_VALUES = ("value", "valueTo")


def nodes(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object under `node` with its path ($defs, properties, items, anyOf branches alike)."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from nodes(item, f"{path}[{index}]")
    elif isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from nodes(value, f"{path}/{key}")


def is_tag_value(path: str) -> bool:
    return "/tagFilters/" in path and path.rsplit("/", 1)[-1] in TAG_VALUES


def listed_schemas(key: str) -> dict[str, dict[str, Any]]:
    listed = session(key, lambda client: client.list_tools())
    return {tool.name: tool.input_schema for tool in listed.tools}


def test_no_tool_schema_has_an_integer_number_union_or_a_null_branch(seeded: Seeded) -> None:
    schemas = listed_schemas(seeded.key)
    assert len(schemas) == 6
    for name, schema in schemas.items():
        for path, node in nodes(schema):
            types = {branch.get("type") for branch in node.get("anyOf", []) if isinstance(branch, dict)}
            if not is_tag_value(path):
                assert not {"integer", "number"} <= types, (name, path, node)
                assert "null" not in types, (name, path, node)  # it hides the type from clients that convert


def prop(schema: dict[str, Any], dotted: str) -> dict[str, Any]:
    node = schema
    for name in dotted.split("."):
        node = node["properties"][name]
    return node


@pytest.mark.parametrize(("tool", "field", "bounds"), [
    ("search_knowledge", "topK", (1, 100)), ("search_knowledge", "rerankerInputCount", (1, 100)),
    ("search_graph", "limit", (1, 100)), ("list_knowledge_bases", "limit", (1, 200)),
    ("recall", "limits.max_items", (1, 50)), ("recall", "limits.max_tokens", (100, 20000)),
    ("recall", "limits.recency_days", (1, None)), ("create_snapshot", "sources.memory.recencyDays", (1, None)),
    ("create_snapshot", "budget.maxTokens", (1, 1_000_000))])
def test_integer_arguments_are_integers_with_their_bounds(tool: str, field: str, bounds: tuple[int, int | None]
                                                           ) -> None:
    schema = prop(BY_NAME[tool].input_schema(), field)
    assert schema["type"] == "integer" and "anyOf" not in schema, schema
    assert (schema["minimum"], schema.get("maximum")) == bounds


def test_a_real_number_is_a_number() -> None:
    weight = BY_NAME["write_memory"].input_schema()["properties"]["relations"]["items"]["properties"]["weight"]
    assert {k: weight[k] for k in ("type", "minimum", "maximum")} == {"type": "number", "minimum": 0, "maximum": 1}


def test_clean_integer_strings_are_integers_anything_else_is_left_as_sent() -> None:
    schema = BY_NAME["search_knowledge"].input_schema()
    given = {"topK": "3", "rerankerInputCount": "-2", "query": "42", "knowledgeBaseIds": ["7"],
             "tagFilters": [{"tagName": "version", "value": "3", "valueTo": "4"}]}
    assert coerce_integers(given, schema) == {**given, "topK": 3, "rerankerInputCount": -2}
    for unclean in (" 3", "3.0", "+3", "1e2", "3_000", "٣", "three", "", "1" * 19):
        assert coerce_integers({"topK": unclean}, schema) == {"topK": unclean}
    recall = BY_NAME["recall"].input_schema()
    assert coerce_integers({"limits": {"max_items": "4", "recency_days": "7"}}, recall) == {
        "limits": {"max_items": 4, "recency_days": 7}}
    assert coerce_integers({"limits": "oops"}, recall) == {"limits": "oops"}  # for the API to refuse


def test_string_integers_pass_and_unclean_ones_are_refused_with_the_envelope(seeded: Seeded) -> None:
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool("search_knowledge", {"knowledgeBaseIds": seeded.kb, "query": "password",
                                                            "topK": "2"}),
                await client.call_tool("recall", {"query": "billing deploy", "limits": {"max_items": "1"}}),
                await client.call_tool("list_knowledge_bases", {"limit": "1"}),
                await client.call_tool("search_knowledge", {"knowledgeBaseIds": seeded.kb, "query": "password",
                                                            "topK": "2.5"})]

    hits, recalled, listing, unclean = session(seeded.key, body)
    assert len(structured(hits)["data"]["results"]) == 2, text(hits)
    assert len(structured(recalled)["direct_matches"]) + len(structured(recalled)["graph_matches"]) <= 1
    assert not recalled.is_error and not listing.is_error and len(structured(listing)["data"]) == 1
    assert envelope(unclean, "BAD_REQUEST")["details"][0]["path"] == "topK"
