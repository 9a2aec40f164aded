"""Tag definitions and filters: validation against typed slots, compiled to an engine-neutral form."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from agentkb.errors import BadRequest
from agentkb.models.bounds import MAX_TAG_NAME, MAX_TEXT_TAG_VALUE
from agentkb.models.domain import TAG_SLOTS, CompiledTagFilter, FieldType, KnowledgeBase, TagDefinition, TagValue

OPERATORS: dict[str, frozenset[str]] = {
    "text": frozenset({"eq", "neq", "contains", "not_contains", "starts_with", "ends_with"}),
    "number": frozenset({"eq", "neq", "gt", "gte", "lt", "lte", "between"}),
    "date": frozenset({"eq", "neq", "gt", "gte", "lt", "lte", "between"}),
    "boolean": frozenset({"eq", "neq"}),
}


def assign_slots(definitions: Sequence[tuple[str, FieldType]]) -> tuple[TagDefinition, ...]:
    """Give each tag the next free slot of its field type; names must be unique and slots suffice."""
    used: dict[str, int] = dict.fromkeys(TAG_SLOTS, 0)
    seen: set[str] = set()
    out: list[TagDefinition] = []
    for position, (name, field_type) in enumerate(definitions):
        path = f"tagDefinitions.{position}"
        if not name or len(name) > MAX_TAG_NAME or name != name.strip():
            raise BadRequest("Invalid tag name", details=[{"path": f"{path}.tagName",
                                                           "message": f"1..{MAX_TAG_NAME} characters, no "
                                                                      "leading or trailing spaces"}])
        if name in seen:
            raise BadRequest("Duplicate tag name", details=[{"path": f"{path}.tagName", "message": "duplicate"}])
        seen.add(name)
        used[field_type] += 1
        if used[field_type] > TAG_SLOTS[field_type]:
            raise BadRequest("Too many tags of one field type", details=[
                {"path": path, "message": f"at most {TAG_SLOTS[field_type]} {field_type} tags per knowledge base"}])
        out.append(TagDefinition(name, field_type, f"{field_type}{used[field_type]}"))
    return tuple(out)


def normalise_date(value: Any) -> str | None:
    """ISO 8601 date or UTC datetime -> a sortable ISO string; None when it is not one."""
    if not isinstance(value, str) or not 8 <= len(value) <= 40:
        return None
    try:
        if len(value) == 10:
            return date.fromisoformat(value).isoformat()
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.isoformat()


def coerce_tag_value(definition: TagDefinition, value: Any) -> TagValue | None:
    """A value of the tag's field type, normalised for storage and comparison; None when it does not fit."""
    kind = definition.field_type
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) else None
    if kind == "date":
        return normalise_date(value)
    if isinstance(value, str) and len(value) <= MAX_TEXT_TAG_VALUE:
        return value
    return None


def validate_document_tags(kb: KnowledgeBase, tags: dict[str, Any] | None) -> dict[str, TagValue]:
    """Document tags must name defined tags with values of their type."""
    out: dict[str, TagValue] = {}
    for name, raw in (tags or {}).items():
        definition = kb.tag(name)
        if definition is None:
            raise BadRequest("Unknown tag", details=[{"path": f"tags.{name}", "message": "no such tag definition"}])
        value = coerce_tag_value(definition, raw)
        if value is None:
            raise BadRequest("Tag value does not match its field type",
                             details=[{"path": f"tags.{name}", "message": f"expected a {definition.field_type}"}])
        out[name] = value
    return out


def _issue(position: int, field: str, message: str) -> BadRequest:
    return BadRequest("Invalid tag filter", details=[{"path": f"tagFilters.{position}.{field}", "message": message}])


def compile_filters(filters: Sequence[Any], kbs: Sequence[KnowledgeBase]) -> tuple[CompiledTagFilter, ...]:
    """Resolve request filters against every selected KB: unknown tags, type or operator mismatches are 400s."""
    compiled: list[CompiledTagFilter] = []
    for position, flt in enumerate(filters):
        definitions = {kb.tag(flt.tagName) for kb in kbs}
        if None in definitions:
            raise _issue(position, "tagName", f"unknown tag '{flt.tagName}' in at least one knowledge base")
        if len({(d.slot, d.field_type) for d in definitions if d}) != 1:
            raise _issue(position, "tagName", "the tag has a different slot or field type across knowledge bases")
        definition = next(d for d in definitions if d)
        if flt.fieldType is not None and flt.fieldType != definition.field_type:
            raise _issue(position, "fieldType", f"tag '{flt.tagName}' is a {definition.field_type} tag")
        if flt.operator not in OPERATORS[definition.field_type]:
            raise _issue(position, "operator",
                         f"operator '{flt.operator}' is not implemented for {definition.field_type} tags")
        value = coerce_tag_value(definition, flt.value)
        if value is None:
            raise _issue(position, "value", f"expected a {definition.field_type} value")
        value_to: TagValue | None = None
        if flt.operator == "between":
            if flt.valueTo is None:
                raise _issue(position, "valueTo", "required for the between operator")
            value_to = coerce_tag_value(definition, flt.valueTo)
            if value_to is None:
                raise _issue(position, "valueTo", f"expected a {definition.field_type} value")
        elif flt.valueTo is not None:
            raise _issue(position, "valueTo", "only allowed with the between operator")
        compiled.append(CompiledTagFilter(definition.slot, definition.field_type, flt.operator, value, value_to))
    return tuple(compiled)
