"""The management commands: kb show/delete, docs show, keys list/revoke (a revoked key answers 401 at once)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.cli.main import main
from agentkb.composition import Ports
from agentkb.services.extract.files import ExtractedText
from agentkb.services.ingest.bulk import EMBED_BATCH, IngestSummary, SourceDocument, ingest_documents
from tests.helpers import body_of, invoke, rest_event


@pytest.fixture()
def run(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def call(*argv: str) -> tuple[int, Any]:
        code = main([*argv, "--data-dir", str(data_dir)])
        out = capsys.readouterr().out
        return code, json.loads(out) if "--json" in argv and code == 0 else out

    return call


def test_kb_show_and_delete_and_docs_show(run: Any, tmp_path: Path) -> None:
    run("kb", "create", "--workspace", "w", "--name", "handbook")
    (tmp_path / "leave.md").write_text("Ask your manager for leave two weeks ahead.", encoding="utf-8")
    run("ingest", "--workspace", "w", "--kb", "handbook", "--quiet", str(tmp_path / "leave.md"))
    code, shown = run("kb", "show", "handbook", "--workspace", "w", "--json")
    assert code == 0 and (shown["name"], shown["documents"], shown["chunks"]) == ("handbook", 1, 1)
    code, doc = run("docs", "show", "leave.md", "--workspace", "w", "--kb", "handbook", "--content", "--json")
    assert (doc["status"], doc["sourcePath"], doc["content"]) == ("ready", str(tmp_path / "leave.md"),
                                                                  "Ask your manager for leave two weeks ahead.")
    code, deleted = run("kb", "delete", "handbook", "--workspace", "w", "--yes", "--json")
    assert code == 0 and deleted["name"] == "handbook"
    assert run("kb", "list", "--workspace", "w", "--json") == (0, [])
    assert run("kb", "show", "handbook", "--workspace", "w")[0] == 2  # a one-line error


class Recorder:
    def __init__(self) -> None:
        self.total = -1
        self.steps: list[int] = []

    def start(self, total_chunks: int) -> None:
        self.total = total_chunks

    def advance(self, chunks: int) -> None:
        self.steps.append(chunks)

    def close(self) -> None:
        return None


def test_progress_counts_chunks_as_they_are_embedded(bundle: Ports) -> None:
    from agentkb.local.operator import create_kb, deps

    kb = create_kb(bundle, "w", "kb", None, [])
    texts = [" ".join(f"Line {d}.{i}: unique words {d * 1000 + i} about subject {i % 13}." for i in range(60))
             for d in range(12)]
    sources = [SourceDocument(f"d{d}.md", f"/src/d{d}.md", ExtractedText(t), {}) for d, t in enumerate(texts)]
    progress = Recorder()
    summary = ingest_documents(deps(bundle), kb, sources, replace=False, summary=IngestSummary(kb.id),
                               progress=progress)
    assert summary.created == 12 and progress.total == summary.chunks > EMBED_BATCH
    assert sum(progress.steps) == progress.total  # every chunk counted once, when its vector exists
    assert max(progress.steps) <= EMBED_BATCH and len(progress.steps) >= progress.total // EMBED_BATCH


def test_keys_list_and_revoke(run: Any, bundle: Ports) -> None:
    code, created = run("keys", "create", "--workspace", "ws1", "--scope", "api:read", "--json")
    key = created["key"]
    listed = run("keys", "list", "--json")[1]
    assert [k["keyId"] for k in listed] == [created["keyId"]] and not listed[0]["revoked"]
    assert "key_hash" not in json.dumps(listed) and key not in json.dumps(listed)
    event = rest_event("GET", "/api/v2/knowledge/bases", key=key, query={"workspaceId": "ws1"})
    assert invoke("ingest", event)["statusCode"] == 200
    assert run("keys", "revoke", created["keyId"], "--json") == (0, {"revoked": created["keyId"]})
    response = invoke("ingest", rest_event("GET", "/api/v2/knowledge/bases", key=key, query={"workspaceId": "ws1"}))
    assert response["statusCode"] == 401 and body_of(response)["error"]["code"] == "UNAUTHORIZED"
    assert run("keys", "revoke", "nope")[0] == 2


def test_list_commands_print_one_tab_separated_line_per_item(run: Any, tmp_path: Path) -> None:
    # Given a knowledge base with one document and one key
    run("kb", "create", "--workspace", "w", "--name", "handbook")
    (tmp_path / "leave.md").write_text("Ask your manager for leave two weeks ahead.", encoding="utf-8")
    run("ingest", "--workspace", "w", "--kb", "handbook", "--quiet", str(tmp_path / "leave.md"))
    _, key = run("keys", "create", "--workspace", "w", "--scope", "api:read", "--json")
    _, kb = run("kb", "show", "handbook", "--workspace", "w", "--json")
    _, (doc,) = run("docs", "list", "--workspace", "w", "--kb", "handbook", "--json")
    _, (listed_key,) = run("keys", "list", "--json")
    # Then the plain listings show the same items, a line each, fields in a fixed order
    assert run("kb", "list", "--workspace", "w") == (0, f"{kb['id']}\thandbook\t{kb['embeddingModel']}@"
                                                        f"{kb['embeddingDimension']}\n")
    assert run("docs", "list", "--workspace", "w", "--kb", "handbook") == (
        0, f"{doc['id']}\tready\t1\tleave.md\t{tmp_path / 'leave.md'}\n")
    assert run("keys", "list") == (0, f"{key['keyId']}\t{listed_key['principal']}\tw\tapi:read\tactive\t"
                                      f"{listed_key['createdAt']}\n")
