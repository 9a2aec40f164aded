"""Tag filters in SQL: the embedded engine's translation of the engine-neutral compiled filters.

opensearch_dsl.compile_dsl_filters is the AWS translation; the index contract suite runs the same filters on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.models.domain import CompiledTagFilter


def _like(value: str, where: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return {"contains": f"%{escaped}%", "starts_with": f"{escaped}%", "ends_with": f"%{escaped}"}[where]


def compile_sql_filters(filters: Sequence[CompiledTagFilter]) -> tuple[str, list[Any]]:
    """Engine-neutral filters -> an AND-ed SQL fragment over the chunk slot columns (parameterised)."""
    clauses: list[str] = []
    params: list[Any] = []
    for f in filters:
        col = f"c.{f.slot}"  # slot names come from our own definitions, never from the request
        value: Any = int(f.value) if f.field_type == "boolean" else f.value
        op = f.operator
        if op in ("contains", "starts_with", "ends_with"):
            clauses.append(f"{col} LIKE ? ESCAPE '\\'")
            params.append(_like(str(value), op))
        elif op == "not_contains":
            clauses.append(f"{col} IS NOT NULL AND {col} NOT LIKE ? ESCAPE '\\'")
            params.append(_like(str(value), "contains"))
        elif op == "between":
            clauses.append(f"{col} BETWEEN ? AND ?")
            params.extend([value, f.value_to])
        else:
            sql_op = {"eq": "=", "neq": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
            clauses.append(f"{col} {sql_op} ?")
            params.append(value)
    return "".join(f" AND ({c})" for c in clauses), params
