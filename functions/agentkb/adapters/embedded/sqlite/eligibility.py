"""The embedded engine's two translations of the recall eligibility predicate (models/eligibility.py).

SQL: a parameterised WHERE fragment over alias `m` (the lexical and entity legs). numpy: the same predicate as a
mask over the workspace's cached facet columns (the vector leg ranks only eligible rows without a SQL scan).
String facets are integer codes in the columns (-1 = NULL); a value no memory holds matches nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentkb.models.eligibility import (
    NUMBER_FACETS,
    STRING_FACETS,
    Absent,
    AllOf,
    AnyOf,
    Clause,
    Eq,
    OneOf,
    compile_eligibility,
)
from agentkb.models.recall.api import RecallScope

# The facet columns, in the order _Facets.build reads them after `id`.
FACET_COLUMNS = ("vis_rank", "project_id", "channel_id", "owner_id", "sensitivity", "confirmed", "stale",
                 "superseded", "valid_until", "updated_at")
_NULL_CODE = -1


@dataclass
class Facets:
    """The eligibility facets of a workspace's memories as arrays (strings as integer codes), by version."""

    version: int
    ids: np.ndarray
    columns: dict[str, np.ndarray]
    codes: dict[str, dict[str, int]]

    @classmethod
    def build(cls, version: int, rows: Sequence[Any]) -> Facets:
        """From rows of (id, *FACET_COLUMNS)."""
        codes: dict[str, dict[str, int]] = {name: {} for name in STRING_FACETS}
        columns: dict[str, np.ndarray] = {}
        for position, name in enumerate(FACET_COLUMNS, start=1):
            if name in STRING_FACETS:
                table = codes[name]
                columns[name] = np.fromiter(
                    (_NULL_CODE if r[position] is None else table.setdefault(r[position], len(table)) for r in rows),
                    np.int64, len(rows))
            else:  # NaN stands for NULL: every comparison with it is false, like SQL's
                columns[name] = np.fromiter((np.nan if r[position] is None else r[position] for r in rows),
                                            np.float64, len(rows))
        return cls(version, np.fromiter((r[0] for r in rows), np.int64, len(rows)), columns, codes)


def to_sql(clause: Clause, params: dict[str, Any]) -> str:
    """The predicate as SQL over alias `m`; values become named parameters added to `params`."""
    if isinstance(clause, AllOf | AnyOf):
        joiner = " AND " if isinstance(clause, AllOf) else " OR "
        return "(" + joiner.join(to_sql(c, params) for c in clause.clauses) + ")"
    column = f"m.{clause.field}"  # facet names come from models/eligibility.py, never from a request
    if isinstance(clause, Absent):
        return f"{column} IS NULL"
    if isinstance(clause, OneOf):
        names = []
        for value in clause.values:
            names.append(f":e{len(params)}")
            params[names[-1][1:]] = value
        return f"{column} IN ({', '.join(names)})" if names else "0"
    name = f"e{len(params)}"
    params[name] = clause.value
    if isinstance(clause, Eq):
        return f"{column} = :{name}"
    return f"{column} {'>=' if clause.inclusive else '>'} :{name}"


def to_mask(clause: Clause, facets: Facets) -> np.ndarray:
    """The predicate evaluated over every cached row at once."""
    if isinstance(clause, AllOf | AnyOf):
        out = np.full(len(facets.ids), isinstance(clause, AllOf))
        for c in clause.clauses:
            out = out & to_mask(c, facets) if isinstance(clause, AllOf) else out | to_mask(c, facets)
        return out
    column = facets.columns[clause.field]
    if isinstance(clause, Absent):
        return np.isnan(column) if clause.field in NUMBER_FACETS else column == _NULL_CODE  # type: ignore[no-any-return]
    if isinstance(clause, OneOf):
        return np.isin(column, np.asarray(clause.values, dtype=np.float64))
    value: Any = clause.value
    if clause.field in STRING_FACETS:
        value = facets.codes[clause.field].get(str(value), -2)  # -2: a value no memory holds
    if isinstance(clause, Eq):
        return column == value  # type: ignore[no-any-return]
    return column >= value if clause.inclusive else column > value  # type: ignore[no-any-return]


def eligibility_sql(scope: RecallScope) -> tuple[str, dict[str, Any]]:
    """The WHERE clause (over alias `m`) that makes a memory eligible for a recall scope, workspace included."""
    params: dict[str, Any] = {"ws": scope.workspace_id}
    return f"m.workspace_id = :ws AND {to_sql(compile_eligibility(scope), params)}", params


def eligibility_mask(facets: Facets, scope: RecallScope) -> np.ndarray:
    """Exactly eligibility_sql's rows, over the workspace's cached facet columns."""
    return to_mask(compile_eligibility(scope), facets)
