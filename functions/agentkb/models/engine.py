"""What an engine is beyond its ports: set once by each builder, so no caller asks the settings "which engine?"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class EngineTraits:
    """The facts about an engine that labels and process wiring need (its ports say everything else)."""

    name: Literal["embedded", "aws"]  # what /health reports as `backend`
    embeddings: Literal["local", "bedrock"]  # recall's `backend_invoked` when the embedding ran
    indexes_in_process: bool  # documents accepted with 202 are indexed by this process, not by a queue consumer


EMBEDDED = EngineTraits("embedded", "local", indexes_in_process=True)
AWS = EngineTraits("aws", "bedrock", indexes_in_process=False)
