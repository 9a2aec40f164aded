"""Each schemas/ file (our published copy) is equivalent to the upstream document it implements.

"Equivalent" here means, concretely: take both schemas, resolve every `$ref` in place (ours through schemas/,
upstream through contracts/, the vendored documents' registry), then drop the keywords that validate nothing
(`$schema`, `$id`, `$comment`, `$defs` once inlined, `title`, `description`, `examples`, `default`,
`deprecated`, `readOnly`, `writeOnly`). What remains - every type, enum, bound, `required`, `additionalProperties`,
conditional and combinator - must be equal, so both accept exactly the same instances. The only exceptions are
the deviations contracts/README.md prescribes, each pinned here to its JSON pointer and expected value:
recall-response `/properties/backend_invoked/enum` widened to `bedrock | local | none`, and the execution scope
context-snapshot references (not published with it), which must be the README's definition field for field.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from referencing import Registry, Resource

from tests.upstream import (
    CONTRACTS,
    KNOWLEDGE_SEARCH,
    ROOT,
    WIDENED_BACKENDS,
    json_documents,
    knowledge_search_schemas,
    registry,
)

ANNOTATIONS = {"$schema", "$id", "$comment", "$defs", "title", "description", "examples", "default", "deprecated",
               "readOnly", "writeOnly"}
SCHEMA_MAPS = {"properties", "patternProperties", "dependentSchemas"}
SUBSCHEMA = {"items", "not", "if", "then", "else", "additionalProperties", "contains", "propertyNames",
             "unevaluatedProperties", "unevaluatedItems"}
SUBSCHEMA_LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}


def ours(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "schemas" / name).read_text())  # type: ignore[no-any-return]


def our_registry() -> Registry:
    docs = [ours(p.name) for p in sorted((ROOT / "schemas").glob("*.json"))]
    return Registry().with_resources([(d["$id"], Resource.from_contents(d)) for d in docs])


def normalise(schema: Any, resolver: Any, seen: tuple[int, ...] = ()) -> Any:
    """`schema` with every $ref inlined and every annotation keyword dropped."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ANNOTATIONS or key == "$ref":
            continue
        if key in SCHEMA_MAPS:
            out[key] = {name: normalise(sub, resolver, seen) for name, sub in value.items()}
        elif key in SUBSCHEMA:
            out[key] = normalise(value, resolver, seen)
        elif key in SUBSCHEMA_LISTS:
            out[key] = [normalise(sub, resolver, seen) for sub in value]
        else:
            out[key] = value
    if "$ref" not in schema:
        return out
    resolved = resolver.lookup(schema["$ref"])
    target_id = id(resolved.contents)  # the same subschema object on a path again: a recursive schema
    target = {"$ref": "(cycle)"} if target_id in seen else normalise(resolved.contents, resolved.resolver,
                                                                     (*seen, target_id))
    return {**out, "allOf": [target]} if out else target


def ours_normalised(name: str) -> Any:
    schema = ours(name)
    return normalise(schema, our_registry().resolver(schema["$id"]))


def upstream_normalised(document: str) -> Any:
    schema = json_documents()[document]
    return normalise(schema, registry().resolver(schema["$id"]))


def markdown_normalised(schema: dict[str, Any]) -> Any:
    return normalise(schema, Registry().resolver())


def differences(a: Any, b: Any, pointer: str = "") -> list[str]:
    """JSON pointers where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in (differences(a[k], b[k], f"{pointer}/{k}") if k in a and k in b else [f"{pointer}/{k}"])]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{pointer}/{i}")]
    return [] if a == b else [pointer or "/"]


@pytest.mark.parametrize("name", [
    "recall-request.v1.schema.json",
    "recall-response.schema.json",
    "context-snapshot.schema.json",
    "workspace-knowledge-search.v1.schema.json",
])
def test_a_json_contract_is_equivalent_to_upstream(name: str) -> None:
    assert differences(ours_normalised(name), upstream_normalised(name)) == []


def test_the_graph_companion_is_the_upstream_graph_document() -> None:
    assert differences(ours_normalised("workspace-knowledge-graph.v1.schema.json"),
                       upstream_normalised("workspace-knowledge-graph.v1.json")) == []


def test_the_only_recall_deviation_is_the_widened_backend_enum() -> None:
    raw = json.loads((CONTRACTS / "recall-response.schema.json").read_text())
    raw_normalised = normalise(raw, registry().resolver(raw["$id"]))
    assert differences(ours_normalised("recall-response.schema.json"), raw_normalised) == [
        "/properties/backend_invoked/enum"]
    assert ours("recall-response.schema.json")["properties"]["backend_invoked"]["enum"] == WIDENED_BACKENDS


def test_the_execution_scope_is_the_readme_definition() -> None:
    """contracts/README.md: {workspaceId, projectId?, knowledgeBaseIds[]?, maxClassification,
    allowedTrustTiers[]?, principal}; context-snapshot's $ref resolves to it in both registries."""
    scope = ours("execution-scope.schema.json")
    assert set(scope["properties"]) == {"workspaceId", "projectId", "knowledgeBaseIds", "maxClassification",
                                        "allowedTrustTiers", "principal"}
    assert set(scope["required"]) == {"workspaceId", "maxClassification", "principal"}
    assert scope["properties"]["knowledgeBaseIds"]["type"] == scope["properties"]["allowedTrustTiers"]["type"] == \
        "array"
    assert "execution-scope" in (CONTRACTS / "README.md").read_text()
    inlined = ours_normalised("context-snapshot.schema.json")["properties"]["scope"]
    assert inlined == markdown_normalised(scope)


def test_knowledge_search_schemas_are_the_reference_blocks() -> None:
    text = (CONTRACTS / KNOWLEDGE_SEARCH).read_text()
    request = next(json.loads(raw) for raw in re.findall(r"^## Request body\n+```json\n(.*?)\n```", text, re.S | re.M))
    blocks = knowledge_search_schemas()
    assert differences(ours_normalised("knowledge-search.v2.response.schema.json"),
                       markdown_normalised(blocks[200])) == []
    assert differences(ours_normalised("knowledge-search.v2.request.schema.json"),
                       markdown_normalised(request["content"]["application/json"]["schema"])) == []
    errors = {status: markdown_normalised(schema) for status, schema in blocks.items() if status >= 400}
    assert len(errors) >= 11 and all(e == errors[400] for e in errors.values())  # one envelope for every status
    assert differences(ours_normalised("error.schema.json"), errors[400]) == []


def test_normalising_keeps_what_validates() -> None:
    """The comparison can fail: a changed bound or a dropped `required` is a difference, a description is not."""
    schema = ours("recall-response.schema.json")
    changed = json.loads(json.dumps(schema))
    changed["properties"]["k"]["minimum"] = 0
    changed["required"].remove("elapsed_ms")
    changed["properties"]["query"]["description"] = "reworded"
    resolver = our_registry().resolver(schema["$id"])
    assert differences(normalise(changed, resolver), normalise(schema, resolver)) == [
        "/properties/k/minimum", "/required"]
