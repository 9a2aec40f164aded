"""/openapi.json names both credentials: the API key and the OAuth bearer token (the v2 contract's two schemes)."""

from __future__ import annotations

from agentkb.api.routers import openapi_document


def test_the_document_offers_the_key_or_a_bearer_token() -> None:
    document = openapi_document()
    assert document["components"]["securitySchemes"]["oauthBearer"]["scheme"] == "bearer"
    assert document["security"] == [{"apiKey": []}, {"oauthBearer": []}]
