"""Pure pieces of the agent projection: hard limits, fair sharing, and exact omitted counts."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AgentLimits:
    """The contract's hard limits of the agent projection (each at the schema's maximum)."""

    relations: int = 24
    relatedEntities: int = 24  # noqa: N815  (contract field name)
    proofs: int = 16
    proofIdsPerItem: int = 4  # noqa: N815
    aliasesPerEntity: int = 8  # noqa: N815
    attributeArrayItems: int = 8  # noqa: N815
    attributeStringCharacters: int = 256  # noqa: N815

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


AGENT_LIMITS = AgentLimits()
OMITTED_KEYS = ("entities", "relations", "relatedEntities", "proofs", "proofReferences", "aliases",
                "attributeValues")


def interleave(groups: Sequence[Sequence[T]], key: Callable[[T], Hashable]) -> list[T]:
    """Round-robin over groups (first of each, then second of each, ...), keeping the first copy of each key."""
    seen: set[Hashable] = set()
    out: list[T] = []
    for depth in range(max((len(g) for g in groups), default=0)):
        for group in groups:
            if depth < len(group) and key(group[depth]) not in seen:
                seen.add(key(group[depth]))
                out.append(group[depth])
    return out


def share_round_robin(references: Sequence[Sequence[str]], limit: int) -> list[str]:
    """Pick at most `limit` distinct ids, one per item per round, so every item gets its first proof first."""
    picked: list[str] = []
    seen: set[str] = set()
    for depth in range(max((len(r) for r in references), default=0)):
        for refs in references:
            if len(picked) >= limit:
                return picked
            if depth < len(refs) and refs[depth] not in seen:
                seen.add(refs[depth])
                picked.append(refs[depth])
    return picked


def cap_attributes(attributes: dict[str, Any], limits: AgentLimits) -> tuple[dict[str, Any], int]:
    """Arrays to `attributeArrayItems` items, strings to `attributeStringCharacters`; returns the cut count."""
    omitted = 0
    out: dict[str, Any] = {}

    def cap_string(value: Any) -> Any:
        nonlocal omitted
        if isinstance(value, str) and len(value) > limits.attributeStringCharacters:
            omitted += 1
            return value[:limits.attributeStringCharacters]
        return value

    for name, value in attributes.items():
        if isinstance(value, list):
            omitted += max(0, len(value) - limits.attributeArrayItems)
            out[name] = [cap_string(v) for v in value[:limits.attributeArrayItems]]
        else:
            out[name] = cap_string(value)
    return out, omitted


def cap_entity(doc: dict[str, Any], limits: AgentLimits, omitted: dict[str, int]) -> dict[str, Any]:
    """An entity within the per-item limits; adds its cuts to `omitted`."""
    aliases = doc["identity"]["aliases"]
    attributes, cut_values = cap_attributes(doc["attributes"], limits)
    omitted["aliases"] += max(0, len(aliases) - limits.aliasesPerEntity)
    omitted["attributeValues"] += cut_values
    out = {**doc, "identity": {**doc["identity"], "aliases": aliases[:limits.aliasesPerEntity]},
           "attributes": attributes}
    return cap_proof_ids(out, limits, omitted)


def cap_proof_ids(doc: dict[str, Any], limits: AgentLimits, omitted: dict[str, int]) -> dict[str, Any]:
    refs = doc["proofIds"]
    omitted["proofReferences"] += max(0, len(refs) - limits.proofIdsPerItem)
    return {**doc, "proofIds": refs[:limits.proofIdsPerItem]}
