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

from agentkb.models.eligibility import NUMBER_FACETS, STRING_FACETS, Clause, compile_eligibility, translate
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


class _SqlWords:
    """The predicate as SQL over alias `m`; values become named parameters added to `params`."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params

    def _param(self, value: Any) -> str:
        name = f"e{len(self.params)}"
        self.params[name] = value
        return ":" + name

    def all_of(self, parts: list[str]) -> str:
        return "(" + " AND ".join(parts) + ")"

    def any_of(self, parts: list[str]) -> str:
        return "(" + " OR ".join(parts) + ")"

    def absent(self, field: str) -> str:  # facet names come from models/eligibility.py, never from a request
        return f"m.{field} IS NULL"

    def one_of(self, field: str, values: tuple[int, ...]) -> str:
        return f"m.{field} IN ({', '.join(self._param(v) for v in values)})" if values else "0"

    def eq(self, field: str, value: str | int) -> str:
        return f"m.{field} = {self._param(value)}"

    def above(self, field: str, value: float, inclusive: bool) -> str:
        return f"m.{field} {'>=' if inclusive else '>'} {self._param(value)}"


class _MaskWords:
    """The predicate evaluated over every cached row at once."""

    def __init__(self, facets: Facets) -> None:
        self.facets = facets

    def _value(self, field: str, value: Any) -> Any:
        """A string facet's value as its column code (-2: a value no memory holds)."""
        return self.facets.codes[field].get(str(value), -2) if field in STRING_FACETS else value

    def all_of(self, parts: list[np.ndarray]) -> np.ndarray:
        out = np.full(len(self.facets.ids), True)
        for part in parts:
            out = out & part
        return out

    def any_of(self, parts: list[np.ndarray]) -> np.ndarray:
        out = np.full(len(self.facets.ids), False)
        for part in parts:
            out = out | part
        return out

    def absent(self, field: str) -> np.ndarray:
        column = self.facets.columns[field]
        return np.isnan(column) if field in NUMBER_FACETS else column == _NULL_CODE  # type: ignore[no-any-return]

    def one_of(self, field: str, values: tuple[int, ...]) -> np.ndarray:
        return np.isin(self.facets.columns[field], np.asarray(values, dtype=np.float64))

    def eq(self, field: str, value: str | int) -> np.ndarray:
        return self.facets.columns[field] == self._value(field, value)  # type: ignore[no-any-return]

    def above(self, field: str, value: float, inclusive: bool) -> np.ndarray:
        column, bound = self.facets.columns[field], self._value(field, value)
        return column >= bound if inclusive else column > bound  # type: ignore[no-any-return]


def clause_sql(clause: Clause, params: dict[str, Any]) -> str:
    """A predicate as SQL over alias `m`; its values become named parameters added to `params`."""
    return translate(clause, _SqlWords(params))


def eligibility_sql(scope: RecallScope) -> tuple[str, dict[str, Any]]:
    """The WHERE clause (over alias `m`) that makes a memory eligible for a recall scope, workspace included."""
    params: dict[str, Any] = {"ws": scope.workspace_id}
    return f"m.workspace_id = :ws AND {clause_sql(compile_eligibility(scope), params)}", params


def eligibility_mask(facets: Facets, scope: RecallScope) -> np.ndarray:
    """Exactly eligibility_sql's rows, over the workspace's cached facet columns."""
    return translate(compile_eligibility(scope), _MaskWords(facets))
