"""JSON numbers in request models: strict (never a string or a boolean), with a JSON Schema of one `type`.

JSON does not tell 3 from 3.0, so a whole-number field accepts both (`StrictInt | StrictFloat`, its validator
refusing 3.5); pydantic writes that union as `anyOf [integer, number]` with the bounds beside it as `ge`/`le`,
which clients read badly (the MCP inspector, for one, then sends `topK` as the string "3"). The schemas below say
what the field is: `{"type": "integer", "minimum": 1, "maximum": 100}`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import GetJsonSchemaHandler, StrictFloat, StrictInt
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


class JsonType:
    """Annotation: the union's JSON Schema becomes `{"type": json_type}` with standard bound keywords."""

    def __init__(self, json_type: str) -> None:
        self.json_type = json_type

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema: dict[str, Any] = handler(core_schema)
        schema.pop("anyOf", None)
        schema["type"] = self.json_type
        for old, new in _BOUNDS.items():
            if old in schema:
                schema[new] = schema.pop(old)
        return schema


# A JSON Schema integer: 3 and 3.0, never 3.5 (the field's validator refuses it), "3" or true.
JsonInt = Annotated[StrictInt | StrictFloat, JsonType("integer")]
# Any JSON number: 0.5 and 1, never "0.5" or true.
JsonNumber = Annotated[StrictFloat | StrictInt, JsonType("number")]
