"""`agentkb kb reindex` from the command line, on both engines (issue 25): a model the deployment cannot build is one
clear line and a non-zero status and changes nothing; on AWS the KB moves to Titan v2 at another dimension (the
registry's, over the same Bedrock client) and searches answer from the new index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import get_ports


@pytest.fixture()
def kb(run: Any, tmp_path: Path) -> None:
    assert run("kb", "create", "--workspace", "w", "--name", "docs")[0] == 0
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pay.md").write_text("# Payments\n\nFailed payments are retried three times.", "utf-8")
    (tmp_path / "src" / "vpn.md").write_text("# VPN\n\nConnect with the corporate client.", "utf-8")
    assert run("ingest", "--workspace", "w", "--kb", "docs", "--quiet", str(tmp_path / "src"))[0] == 0


def _profile() -> tuple[str, int]:
    found = get_ports().catalog.find_knowledge_base_by_name("w", "docs")
    assert found is not None
    return found.profile.model, found.profile.dimension


def test_a_model_the_deployment_cannot_build_is_one_line_and_changes_nothing(run: Any, kb: None) -> None:
    before = _profile()
    code, out, err = run("kb", "reindex", "--workspace", "w", "--kb", "docs", "--embedding-model", "no-such-model",
                         "--quiet")
    assert (code, out) == (2, "")
    assert "cannot embed with no-such-model" in err and "--embedding-model" in err and len(err.splitlines()) == 1
    assert _profile() == before


def test_the_same_profile_rebuilds_with_counts(run: Any, kb: None) -> None:
    code, out, _ = run("kb", "reindex", "--workspace", "w", "--kb", "docs", "--quiet")
    assert (code, out) == (0, "reindexed docs: documents 2, chunks 2\n")


def test_on_aws_the_kb_moves_to_another_titan_dimension(run: Any, kb: None, engine: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if engine != "aws":
        pytest.skip("the embedded engine builds one model (MiniLM): its switch is tests/contract's, with fakes")
    from agentkb.adapters.aws.opensearch.generations import OpenSearchShadowGenerations

    waits: list[float] = []
    monkeypatch.setattr("agentkb.services.portability.reindex.time.sleep", waits.append)
    code, out, err = run("kb", "reindex", "--workspace", "w", "--kb", "docs", "--embedding-model",
                         "amazon.titan-embed-text-v2:0@512")
    assert code == 0, err
    assert out == ("reindexed docs: documents 2, chunks 2, already staged 0, caught up 0, "
                   "now amazon.titan-embed-text-v2:0 (512-d)\n")
    assert "reindex docs" in err  # the progress bar
    assert _profile() == ("amazon.titan-embed-text-v2:0", 512)
    assert waits == [OpenSearchShadowGenerations.settle_s] == [30.0]  # before the old index's records went
    _, hits, _ = run("search", "payments retried", "--workspace", "w", "--kb", "docs", "--local", "--json")
    assert hits["data"]["results"][0]["documentName"] == "pay.md"
    # the deployment is still configured for another dimension: a folder ingested into the KB is embedded at 512
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "tax.md").write_text("# Taxes\n\nInvoices carry the customer's tax number.", "utf-8")
    assert run("ingest", "--workspace", "w", "--kb", "docs", "--quiet", str(tmp_path / "more"))[0] == 0
    ports = get_ports()
    kb = ports.catalog.find_knowledge_base_by_name("w", "docs")
    assert kb is not None
    tax = ports.catalog.find_document_by_name(kb.id, "tax.md")
    assert tax is not None
    assert {len(c.embedding or []) for c in ports.archive.document_chunks(kb, [tax.id])[tax.id]} == {512}
