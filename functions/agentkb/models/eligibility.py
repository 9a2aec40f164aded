"""Recall eligibility, written once: a RecallScope compiled to an engine-neutral predicate over memory facets.

Each engine translates the same predicate (embedded: SQL WHERE and a numpy mask; AWS: a DynamoDB FilterExpression,
OpenSearch bool/filter DSL and `evaluate` on consistent reads), exactly like tag filters are compiled once and
translated per engine. `translate` walks the predicate once for all of them: an engine only says what each kind of
clause is in its own words (a `Translation`). A congruence test generates scopes and memories and holds every
translation equal.

Facets (the only names a predicate mentions): vis_rank, project_id, channel_id, owner_id, sensitivity, confirmed,
stale, superseded (0/1 integers), valid_until and updated_at (epoch seconds). A missing facet is SQL NULL: it
never equals or compares true, only `Absent` holds for it. The workspace is not a facet: every engine partitions
by workspace before the predicate applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from agentkb.models.memory.api import VISIBILITY_RANK
from agentkb.models.recall.api import RecallScope

STRING_FACETS = frozenset({"project_id", "channel_id", "owner_id"})
NUMBER_FACETS = frozenset({"vis_rank", "sensitivity", "confirmed", "stale", "superseded", "valid_until",
                           "updated_at"})
SENSITIVITY_MASK = 7  # three flags: contains_code 1, contains_customer_data 2, contains_private_meeting_data 4


@dataclass(frozen=True, slots=True)
class Eq:
    field: str
    value: str | int


@dataclass(frozen=True, slots=True)
class Above:
    """`field > value` (strict) or `field >= value` (`inclusive`)."""

    field: str
    value: float
    inclusive: bool = False


@dataclass(frozen=True, slots=True)
class OneOf:
    field: str
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Absent:
    field: str


@dataclass(frozen=True, slots=True)
class AllOf:
    clauses: tuple[Clause, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    clauses: tuple[Clause, ...]


Clause = Eq | Above | OneOf | Absent | AllOf | AnyOf
Operator = Literal["=", ">", ">="]
T = TypeVar("T")


class Translation(Protocol[T]):
    """One engine's words for each kind of clause; `translate` hands it the parts already translated."""

    def all_of(self, parts: list[T]) -> T: ...
    def any_of(self, parts: list[T]) -> T: ...
    def absent(self, field: str) -> T: ...
    def one_of(self, field: str, values: tuple[int, ...]) -> T: ...
    def eq(self, field: str, value: str | int) -> T: ...
    def above(self, field: str, value: float, inclusive: bool) -> T: ...


# What a memory listing's `status` filter keeps (MemoryListQuery.status), in the same clauses the engines translate.
LISTING_STATUS: dict[str, Clause] = {"live": AllOf((Eq("superseded", 0), Eq("stale", 0))),
                                     "superseded": Eq("superseded", 1), "stale": Eq("stale", 1),
                                     "unconfirmed": Eq("confirmed", 0)}


def compile_eligibility(scope: RecallScope) -> AllOf:
    """The memories a recall scope may see: audience, sensitivity, project, review, staleness and recency."""
    p_rank, c_rank, o_rank = (VISIBILITY_RANK[v] for v in ("project", "channel", "personal"))
    audience: list[Clause] = [Above("vis_rank", p_rank),
                              AllOf((Eq("vis_rank", o_rank), Eq("owner_id", scope.principal_id)))]
    if scope.project_id is not None:
        audience.append(AllOf((Eq("vis_rank", p_rank), Eq("project_id", scope.project_id))))
    if scope.channel_id is not None:
        audience.append(AllOf((Eq("vis_rank", c_rank), Eq("channel_id", scope.channel_id))))
    deny = SENSITIVITY_MASK & ~scope.allowed_sensitivity
    clauses: list[Clause] = [Above("vis_rank", scope.audience_rank, inclusive=True), AnyOf(tuple(audience)),
                             OneOf("sensitivity", tuple(v for v in range(8) if v & deny == 0))]
    if scope.project_only:  # a request without a project keeps only the memories without one
        clauses.append(Eq("project_id", scope.project_id) if scope.project_id is not None else Absent("project_id"))
    if not scope.include_unconfirmed:
        clauses.append(Eq("confirmed", 1))
    if not scope.include_stale:
        clauses += [Eq("superseded", 0), Eq("stale", 0),
                    AnyOf((Absent("valid_until"), Above("valid_until", scope.now)))]
    if scope.since is not None:
        clauses.append(Above("updated_at", scope.since, inclusive=True))
    return AllOf(tuple(clauses))


def evaluate(clause: Clause, facets: Mapping[str, Any]) -> bool:
    """The reference semantics: the predicate on one memory's facets (None or missing = NULL)."""
    if isinstance(clause, AllOf):
        return all(evaluate(c, facets) for c in clause.clauses)
    if isinstance(clause, AnyOf):
        return any(evaluate(c, facets) for c in clause.clauses)
    value = facets.get(clause.field)
    if isinstance(clause, Absent):
        return value is None
    if value is None:
        return False
    if isinstance(clause, Eq):
        return bool(value == clause.value)
    if isinstance(clause, OneOf):
        return value in clause.values
    return bool(value >= clause.value if clause.inclusive else value > clause.value)


def translate(clause: Clause, words: Translation[T]) -> T:
    """The predicate in an engine's words, its clauses taken in reading order (placeholders number that way)."""
    if isinstance(clause, AllOf):
        return words.all_of([translate(c, words) for c in clause.clauses])
    if isinstance(clause, AnyOf):
        return words.any_of([translate(c, words) for c in clause.clauses])
    if isinstance(clause, Absent):
        return words.absent(clause.field)
    if isinstance(clause, OneOf):
        return words.one_of(clause.field, clause.values)
    if isinstance(clause, Eq):
        return words.eq(clause.field, clause.value)
    return words.above(clause.field, clause.value, clause.inclusive)
