"""`agent_surface` through the recall handler on the embedded engine (tests/handlers/aws/test_aws_recall_surface.py runs
the same cases on the AWS memory stores). Every 200 of `recall()` is validated against schemas/ and upstream.
"""

from __future__ import annotations

from typing import Any

from tests.handlers.recall.recall_helpers import FailingEmbedder, recall, write

SURFACE_KEYS = {"input_count", "output_count", "max_items", "content_truncated", "output_truncated", "dropped"}


def test_nothing_cut_means_no_record(rw_key: str, fake_embedder: Any) -> None:
    for i in range(3):
        write(rw_key, f"m{i}", f"log retention {i}")
    out = recall(rw_key, query="log retention", limits={"max_items": 3})
    assert len(out["results"]) == 3 and out["truncated"] is False and "agent_surface" not in out


def test_a_max_items_cut_is_reported(rw_key: str, fake_embedder: Any) -> None:
    for i in range(6):
        write(rw_key, f"m{i}", f"log retention {i}")
    out = recall(rw_key, query="log retention", limits={"max_items": 3})
    surface = out["agent_surface"]
    assert out["truncated"] is True and len(out["results"]) == 3
    assert set(surface) == {"input_count", "output_count", "max_items"}  # no dropped without output_truncated
    assert surface["input_count"] > surface["output_count"] == 3 and surface["max_items"] == 3
    assert out["direct_matches"] and "graph_matches" in out  # the aliases stay: aliases_removed never appears


def test_a_max_items_cut_on_the_lexical_fallback_is_reported(override_ports: Any, rw_key: str,
                                                            fake_embedder: Any) -> None:
    for i in range(6):
        write(rw_key, f"m{i}", f"log retention {i}")
    override_ports(embedder=FailingEmbedder(error=RuntimeError("down")))
    out = recall(rw_key, query="log retention", limits={"max_items": 2})
    assert out["vec_degraded"] is True and out["truncated"] is True
    assert out["agent_surface"] == {"input_count": 6, "output_count": 2, "max_items": 2}


def test_max_items_then_max_tokens_both_reported(rw_key: str, fake_embedder: Any) -> None:
    for i in range(8):
        write(rw_key, f"m{i}", f"alerting thresholds {i} " + "detail " * 40, description="alerting " * 10)
    out = recall(rw_key, query="alerting thresholds", limits={"max_items": 5, "max_tokens": 150})
    surface = out["agent_surface"]
    assert set(surface) <= SURFACE_KEYS and surface["max_items"] == 5 and surface["output_truncated"] is True
    assert surface["dropped"] == 5 - len(out["results"]) and surface["output_count"] == len(out["results"])
