"""Tool input schemas generated from our pydantic request models, shaped for MCP clients.

The schema an agent sees is the request model's own JSON Schema (types, enums, limits), with `$ref`s inlined
(some clients do not follow them), pydantic's union-level `ge`/`le` turned into JSON Schema keywords, optional
fields without their `null` branch (omitting one is how a client leaves it out; clients such as the MCP
inspector convert an argument by its property's `type`, which an `anyOf` with null hides), and the fields the tool
fills in itself (defaults, the implied workspace, generated ids) made optional. The descriptions are the models'
own (`Field(description=...)`), with a note where the tool does more. It documents; it does not gate: the API
validates every call.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

_KEYWORD_FIXES = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    """Replace every `{"$ref": "#/$defs/X"}` by a copy of X (our request models are not recursive)."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        merged = {**defs[ref.removeprefix("#/$defs/")], **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs)
    return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}


def _objects(node: Any, parent_key: str = "") -> Iterator[tuple[dict[str, Any], str]]:
    """Every JSON object in `node` with the key it is the value of, each before its children (which are read
    after the caller has changed it)."""
    if isinstance(node, list):
        for item in node:
            yield from _objects(item)
    elif isinstance(node, dict):
        yield node, parent_key
        for key, value in node.items():
            yield from _objects(value, key)


def _tidy(schema: Any) -> None:
    """Standard keywords for pydantic's union-level bounds; no auto-generated per-field titles."""
    for node, parent_key in _objects(schema):
        if parent_key == "properties":  # its keys are field names, not keywords
            continue
        for old, new in _KEYWORD_FIXES.items():
            if old in node and new not in node:
                node[new] = node.pop(old)
        node.pop("title", None)


_NULL = {"type": "null"}
# A clean integer string: what a client that sends every argument as a string means by an integer (no sign but
# minus, no spaces, underscores or exponents; at most 18 digits, beyond any bound of ours).
CLEAN_INTEGER = re.compile(r"-?[0-9]{1,18}")


def _without_null(prop: dict[str, Any]) -> None:
    """An optional property without its `null` branch (and its `default: null`): the API still takes null."""
    branches = prop.get("anyOf")
    if not isinstance(branches, list) or _NULL not in branches:
        return
    others = [branch for branch in branches if branch != _NULL]
    prop.pop("anyOf")
    if prop.get("default", 0) is None:
        prop.pop("default")
    if len(others) == 1:
        prop.update({**others[0], **prop})
    else:
        prop["anyOf"] = others


def _drop_nulls(schema: Any) -> None:
    for node, _ in _objects(schema):
        required = set(node.get("required", []))
        for name, prop in (node.get("properties") or {}).items():
            if name not in required and isinstance(prop, dict):
                _without_null(prop)


def _optional(schema: dict[str, Any], field: str) -> None:
    required = [name for name in schema.get("required", []) if name != field]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)


def apply_defaults(schema: dict[str, Any], defaults: Mapping[str, Any]) -> None:
    """Mark each defaulted field optional with its default; nested objects get their fields' defaults."""
    properties = schema.get("properties", {})
    for field, value in defaults.items():
        prop = properties.get(field)
        if prop is None:
            continue
        _optional(schema, field)
        if isinstance(value, dict):
            apply_defaults(prop, value)
        else:
            prop["default"] = value


def _at(schema: dict[str, Any], path: tuple[str, ...]) -> tuple[dict[str, Any], str] | None:
    node = schema
    for name in path[:-1]:
        node = node.get("properties", {}).get(name, {})
    return (node, path[-1]) if path[-1] in node.get("properties", {}) else None


def add_note(schema: dict[str, Any], path: tuple[str, ...], note: str) -> None:
    """`note` appended to the description of the field at `path` (what the tool does beyond the API)."""
    found = _at(schema, path)
    if found is not None:
        prop = found[0]["properties"][found[1]]
        prop["description"] = f"{prop.get('description', '').rstrip('.')}. {note}".lstrip(". ")


def make_optional(schema: dict[str, Any], path: tuple[str, ...], note: str) -> None:
    """A field the tool fills in when it is omitted: optional, its description says how it is filled."""
    found = _at(schema, path)
    if found is not None:
        _optional(*found)
        add_note(schema, path, note)


def model_input_schema(model: type[BaseModel], *, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The MCP input schema of a request model (a fresh dict each call)."""
    raw = model.model_json_schema(by_alias=True)
    schema: dict[str, Any] = _inline(copy.deepcopy(raw), raw.get("$defs", {}))
    _tidy(schema)
    _drop_nulls(schema)
    apply_defaults(schema, defaults)
    schema["type"] = "object"
    return schema


def fill_defaults(arguments: dict[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments with the tool's defaults added where absent (nested objects merged, given values win)."""
    out = dict(arguments)
    for field, value in defaults.items():
        if field not in out:
            out[field] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(out[field], dict):
            out[field] = fill_defaults(out[field], value)
    return out


def _types(schema: Mapping[str, Any]) -> set[str]:
    branches = schema.get("anyOf") or [schema]
    return {str(branch["type"]) for branch in branches if isinstance(branch, dict) and "type" in branch}


def _branch(schema: Mapping[str, Any], json_type: str) -> Mapping[str, Any]:
    return next((b for b in schema.get("anyOf") or [schema] if isinstance(b, dict) and b.get("type") == json_type),
                {})


def coerce_integers(value: Any, schema: Mapping[str, Any]) -> Any:
    """`value` with every clean integer string where the schema wants an integer (and takes no string) made an
    integer: some clients send each argument as a string. Anything else is left for the API to judge."""
    if isinstance(value, str):
        wanted = _types(schema)
        integer = "integer" in wanted and "string" not in wanted and CLEAN_INTEGER.fullmatch(value)
        return int(value) if integer else value
    if isinstance(value, dict):
        properties = _branch(schema, "object").get("properties") or {}
        return {k: coerce_integers(v, properties[k]) if k in properties else v for k, v in value.items()}
    if isinstance(value, list):
        items = _branch(schema, "array").get("items")
        return [coerce_integers(v, items) for v in value] if isinstance(items, dict) else value
    return value
