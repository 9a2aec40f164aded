"""The recall token budget: a hard cap on the returned text, cutting lowest-ranked items first, then text."""

from __future__ import annotations

from dataclasses import dataclass

from agentkb.models.recall.api import RecallItem
from agentkb.ports.embedding import Tokenizer

TEXT_FIELDS = ("name", "description", "snippet")


@dataclass
class BudgetOutcome:
    items: list[RecallItem]
    input_count: int
    content_truncated: bool

    @property
    def output_count(self) -> int:
        return len(self.items)

    @property
    def dropped(self) -> int:
        return self.input_count - len(self.items)


def _text(item: RecallItem, name: str) -> str:
    return str(getattr(item, name))


def item_tokens(item: RecallItem, tokenizer: Tokenizer) -> int:
    return sum(tokenizer.count(_text(item, name)) for name in TEXT_FIELDS if _text(item, name))


def cut_to_tokens(text: str, limit: int, tokenizer: Tokenizer) -> str:
    """The longest token-aligned prefix of `text` with at most `limit` tokens."""
    if limit <= 0:
        return ""
    spans = tokenizer.spans(text)
    if len(spans) <= limit:
        return text
    cut = text[:spans[limit - 1][1]]
    while cut and tokenizer.count(cut) > limit:  # re-tokenising a prefix may split differently
        limit -= 1
        cut = text[:spans[limit - 1][1]] if limit > 0 else ""
    return cut


def _shrink(item: RecallItem, budget: int, tokenizer: Tokenizer) -> RecallItem | None:
    """The item with its snippet, then its description, cut to fit the budget (None if its name alone is over)."""
    out = item
    for name in ("snippet", "description"):
        others = sum(tokenizer.count(_text(out, f)) for f in TEXT_FIELDS if f != name and _text(out, f))
        out = out.model_copy(update={name: cut_to_tokens(_text(out, name), budget - others, tokenizer)})
        if item_tokens(out, tokenizer) <= budget:
            return out
    return None


def fit_to_budget(items: list[RecallItem], budget: int, tokenizer: Tokenizer) -> BudgetOutcome:
    """Keep the best-ranked prefix that fits; if not even the first item fits, cut its text instead."""
    kept: list[RecallItem] = []
    used = 0
    for item in items:
        cost = item_tokens(item, tokenizer)
        if used + cost > budget:
            break
        kept.append(item)
        used += cost
    if kept or not items:
        return BudgetOutcome(kept, len(items), False)
    first = _shrink(items[0], budget, tokenizer)
    return BudgetOutcome([first] if first else [], len(items), first is not None)
