"""The base of every request and response model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A pydantic model whose validator is built on first use (`defer_build`), not at import.

    A Lambda function imports the models of every route it serves but a cold start usually answers one of them:
    the search function, for instance, builds the graph search models only when a graph search arrives.
    Subclasses' `model_config` is merged with this one.
    """

    model_config = ConfigDict(defer_build=True)
