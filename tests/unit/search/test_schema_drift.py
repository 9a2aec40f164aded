"""schemas/ must stay compatible with the upstream contracts (contracts/), and our models with schemas/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentkb.models.search import KnowledgeSearchData, KnowledgeSearchRequest, KnowledgeSearchResult
from tests.upstream import CONTRACTS, contracts_dir

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = CONTRACTS / "knowledge-search.v2.api.md"  # vendored; contracts_dir() fails loudly if it is missing


def schema(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "schemas" / name).read_text())  # type: ignore[no-any-return]


def strip(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in ("$schema", "$id", "title")}


def test_schema_files_equal_the_shared_contract() -> None:
    contracts_dir()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", CONTRACT.read_text(), re.S)]
    found = {b["description"][:40]: b for b in blocks if isinstance(b, dict) and "content" in b and "description" in b}
    response = next(v for k, v in found.items() if k.startswith("Matching document chunks"))
    request = next(v for k, v in found.items() if k.startswith("Knowledge bases, query"))
    assert strip(schema("knowledge-search.v2.response.schema.json")) == strip(
        response["content"]["application/json"]["schema"])
    assert strip(schema("knowledge-search.v2.request.schema.json")) == strip(
        request["content"]["application/json"]["schema"])


def test_request_model_matches_the_contract() -> None:
    contract = schema("knowledge-search.v2.request.schema.json")
    model = KnowledgeSearchRequest.model_json_schema()
    assert set(model["properties"]) == set(contract["properties"])
    assert set(model["required"]) == set(contract["required"])
    assert model.get("additionalProperties") is False and contract["additionalProperties"] is False
    filter_props = contract["properties"]["tagFilters"]["items"]["properties"]
    assert set(model["$defs"]["KnowledgeSearchTagFilter"]["properties"]) == set(filter_props)


def test_response_models_match_the_contract() -> None:
    data = schema("knowledge-search.v2.response.schema.json")["properties"]["data"]
    result = data["properties"]["results"]["items"]
    assert set(KnowledgeSearchData.model_fields) == set(data["properties"])
    assert set(KnowledgeSearchResult.model_fields) == set(result["properties"])
    required = {n for n, f in KnowledgeSearchResult.model_fields.items() if f.is_required()}
    assert required == set(result["required"])
