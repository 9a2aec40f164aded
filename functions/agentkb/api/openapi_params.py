"""Query parameters in /openapi.json as the API reads them, so that a client (or a fuzzer) that follows the
document is never refused for what it was allowed.

Powertools documents an optional `str | None` query parameter as `anyOf: [string, null]`, but a query string has no
null: a generator then sends the text `null` (not an absence, and for an enum a 400). An optional parameter is one
that may be left out (`required: false`), so the null branch goes. And the gate refuses an empty value
(`?project_id=`, "omit the parameter instead") on every route but /ob1, so there a string says `minLength: 1`;
on /ob1 an empty value is no value, as on OB1's own server (gate.empty_query_values).
"""

from __future__ import annotations

from typing import Any

NULL = {"type": "null"}
OB1_PATHS = "/ob1/"


def document_query_parameters(document: dict[str, Any]) -> None:
    """Rewrites every query parameter schema of `document` in place (see the module docstring)."""
    for path, item in document.get("paths", {}).items():
        refused = not path.startswith(OB1_PATHS)
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters") or []:
                if parameter.get("in") == "query" and isinstance(parameter.get("schema"), dict):
                    parameter["schema"] = query_schema(parameter["schema"], empty_refused=refused)


def query_schema(schema: dict[str, Any], empty_refused: bool) -> dict[str, Any]:
    """One parameter's schema without a null branch, and with `minLength: 1` on a string where empty is refused."""
    out = dict(schema)
    branches = out.get("anyOf")
    if isinstance(branches, list) and NULL in branches:
        kept = [branch for branch in branches if branch != NULL]
        del out["anyOf"]
        if len(kept) == 1:
            out = {**kept[0], **out}  # the outer title, description and default stay
        else:
            out["anyOf"] = kept
        if out.get("default", "") is None:
            del out["default"]
    open_text = out.get("type") == "string" and "enum" not in out and "const" not in out  # those name their values
    if empty_refused and open_text and not out.get("minLength"):
        out["minLength"] = 1
    return out
