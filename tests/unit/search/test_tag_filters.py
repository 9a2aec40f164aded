"""Tag definitions and filter compilation: every mismatch is a 400, never ignored."""

from types import SimpleNamespace

import pytest

from agentkb.errors import BadRequest
from agentkb.models.domain import EmbeddingProfile, KnowledgeBase
from agentkb.services.search.tag_filters import assign_slots, compile_filters, validate_document_tags

PROFILE = EmbeddingProfile("m", 3)


def kb(tags: list[tuple[str, str]], kb_id: str = "kb1") -> KnowledgeBase:
    return KnowledgeBase(kb_id, "ws", kb_id, None, PROFILE, assign_slots(tags), "t")  # type: ignore[arg-type]


KB = kb([("category", "text"), ("priority", "number"), ("updated", "date"), ("public", "boolean")])


def flt(tag: str, value: object, operator: str = "eq", value_to: object = None, field_type: str | None = None):
    return SimpleNamespace(tagName=tag, value=value, operator=operator, valueTo=value_to, fieldType=field_type)


def test_slots_are_typed_and_sequential() -> None:
    slots = {t.tag_name: t.slot for t in KB.tag_definitions}
    assert slots == {"category": "text1", "priority": "number1", "updated": "date1", "public": "boolean1"}


def test_too_many_tags_of_one_type_and_duplicates_are_rejected() -> None:
    with pytest.raises(BadRequest):
        assign_slots([(f"b{i}", "boolean") for i in range(4)])
    with pytest.raises(BadRequest):
        assign_slots([("x", "text"), ("x", "number")])


@pytest.mark.parametrize(("tag", "op"), [("category", "contains"), ("category", "ends_with"), ("priority", "between"),
                                         ("updated", "gte"), ("public", "neq")])
def test_operators_the_type_implements_compile(tag: str, op: str) -> None:
    value = {"category": "bill", "priority": 1, "updated": "2026-01-01", "public": True}[tag]
    to = {"priority": 5, "updated": "2026-12-31"}.get(tag) if op == "between" else None
    (compiled,) = compile_filters([flt(tag, value, op, to)], [KB])
    assert compiled.operator == op and compiled.slot.startswith(compiled.field_type)


@pytest.mark.parametrize(("tag", "op"), [("category", "gt"), ("priority", "contains"), ("public", "lt"),
                                         ("updated", "starts_with"), ("category", "between")])
def test_operator_the_type_does_not_implement_is_400(tag: str, op: str) -> None:
    with pytest.raises(BadRequest) as err:
        compile_filters([flt(tag, "x", op, "y")], [KB])
    assert err.value.details[0]["path"] == "tagFilters.0.operator"


def test_unknown_tag_type_mismatch_and_between_without_value_to() -> None:
    with pytest.raises(BadRequest, match="tag filter"):
        compile_filters([flt("nope", "x")], [KB])
    with pytest.raises(BadRequest):
        compile_filters([flt("priority", "high")], [KB])  # number tag, string value
    with pytest.raises(BadRequest):
        compile_filters([flt("priority", True)], [KB])  # booleans are not numbers
    with pytest.raises(BadRequest):
        compile_filters([flt("category", "x", field_type="number")], [KB])  # declared type differs
    with pytest.raises(BadRequest) as err:
        compile_filters([flt("priority", 1, "between")], [KB])
    assert err.value.details[0]["path"] == "tagFilters.0.valueTo"
    with pytest.raises(BadRequest):
        compile_filters([flt("priority", 1, "eq", 3)], [KB])  # valueTo only with between
    with pytest.raises(BadRequest):
        compile_filters([flt("updated", "not-a-date")], [KB])


def test_tag_must_match_slot_and_type_in_every_kb() -> None:
    other = kb([("priority", "text")], "kb2")
    with pytest.raises(BadRequest):
        compile_filters([flt("priority", 1)], [KB, other])
    missing = kb([("category", "text")], "kb3")
    with pytest.raises(BadRequest):
        compile_filters([flt("priority", 1)], [KB, missing])
    same = kb([("category", "text")], "kb4")
    assert compile_filters([flt("category", "a")], [KB, same])[0].slot == "text1"


def test_document_tags_are_typed() -> None:
    tags = validate_document_tags(KB, {"category": "billing", "priority": 2, "updated": "2026-03-01", "public": False})
    assert tags == {"category": "billing", "priority": 2.0, "updated": "2026-03-01", "public": False}
    with pytest.raises(BadRequest):
        validate_document_tags(KB, {"unknown": 1})
    with pytest.raises(BadRequest):
        validate_document_tags(KB, {"priority": "2"})
