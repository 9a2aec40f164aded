"""`agentkb kb list|show|delete|sweep-cache` and `agentkb keys list|revoke` (docs_cli.py: `agentkb docs`).

Lists print one tab-separated line per item, `--json` one JSON array, `--ids` one id per line (for scripts:
`KB=$(agentkb kb list --workspace W --name handbook --ids)`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from agentkb.cli.io import confirm
from agentkb.composition import Ports
from agentkb.errors import NotFound
from agentkb.models.domain import ApiKeyRecord, Document, KnowledgeBase
from agentkb.paging import PAGE_MAX

T = TypeVar("T")


def kb_json(kb: KnowledgeBase) -> dict[str, Any]:
    return {"id": kb.id, "workspaceId": kb.workspace_id, "name": kb.name, "description": kb.description,
            "embeddingModel": kb.profile.model, "embeddingDimension": kb.profile.dimension,
            "tagDefinitions": [{"tagName": t.tag_name, "fieldType": t.field_type, "slot": t.slot}
                               for t in kb.tag_definitions], "createdAt": kb.created_at}


def document_json(doc: Document) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": doc.id, "name": doc.name, "sourceUrl": doc.source_url, "sourcePath": doc.source_path, "tags": doc.tags,
        "chunkCount": doc.chunk_count, "tokenCount": doc.token_count, "contentHash": doc.content_hash,
        "revision": doc.revision, "status": doc.status, "createdAt": doc.created_at}
    if doc.error:
        out["error"] = doc.error
    return out


def key_json(key: ApiKeyRecord) -> dict[str, Any]:
    """A key as the list shows it: never its hash."""
    return {"keyId": key.key_id, "principal": key.principal, "workspaces": list(key.workspaces),
            "scopes": list(key.scopes), "createdAt": key.created_at, "revoked": key.revoked}


def resolve_kb(c: Ports, workspace: str, ref: str) -> KnowledgeBase:
    from agentkb.local.operator import resolve_kb

    return resolve_kb(c, workspace, ref)


def documents(c: Ports, kb: KnowledgeBase) -> Iterator[Document]:
    cursor: str | None = None
    while True:
        page, cursor = c.catalog.list_documents(kb.id, PAGE_MAX, cursor)
        yield from page
        if cursor is None:
            return


def print_listing(items: Iterable[T], args: argparse.Namespace, to_json: Callable[[T], dict[str, Any]],
                  to_row: Callable[[T], Sequence[str]]) -> int:
    """A list command's output: --json one JSON array, --ids the first column, else one tab-separated line each."""
    if args.json:
        print(json.dumps([to_json(item) for item in items]))
        return 0
    for item in items:
        row = to_row(item)
        print(row[0] if getattr(args, "ids", False) else "\t".join(row))
    return 0


def _kb_list(args: argparse.Namespace, ports: Ports) -> int:
    kbs = [kb for kb in ports.catalog.list_knowledge_bases(args.workspace) if args.name in (None, kb.name)]
    return print_listing(kbs, args, kb_json, lambda kb: (kb.id, kb.name, kb.profile.key))


def _kb_show(args: argparse.Namespace, ports: Ports) -> int:
    kb = resolve_kb(ports, args.workspace, args.kb)
    docs = list(documents(ports, kb))
    out = {**kb_json(kb), "documents": len(docs), "chunks": sum(d.chunk_count for d in docs)}
    print(json.dumps(out, indent=None if args.json else 2))
    return 0


def _kb_delete(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.operator import OPERATOR
    from agentkb.services.ingest.knowledge_admin import delete_knowledge_base

    kb = resolve_kb(ports, args.workspace, args.kb)
    confirm(lambda: f"delete knowledge base {kb.name!r} ({kb.id}) and its {sum(1 for _ in documents(ports, kb))}"
                    " documents?", args.yes, "agentkb kb delete")
    delete_knowledge_base(ports.catalog, ports.index, OPERATOR, args.workspace, kb.id, ports.generations)
    print(json.dumps({"deleted": kb.id, "name": kb.name}) if args.json else f"deleted {kb.id} ({kb.name})")
    return 0


def _kb_sweep_cache(args: argparse.Namespace, ports: Ports) -> int:
    import time

    done = ports.embedding_cache.sweep(time.time())
    out = {"examined": done.examined, "removed": done.removed, "stamped": done.stamped}
    print(json.dumps(out) if args.json else " ".join(f"{k}={v}" for k, v in out.items()))
    return 0


def _keys_list(args: argparse.Namespace, ports: Ports) -> int:
    return print_listing(ports.keys.list_keys(), args, key_json, lambda k: (
        k.key_id, k.principal, ",".join(k.workspaces), ",".join(k.scopes), "revoked" if k.revoked else "active",
        k.created_at))


def _keys_revoke(args: argparse.Namespace, ports: Ports) -> int:
    if not ports.keys.revoke_key(args.key_id):
        raise NotFound(f"no key {args.key_id!r}")
    print(json.dumps({"revoked": args.key_id}) if args.json else f"revoked {args.key_id}")
    return 0


def add_output_options(cmd: argparse.ArgumentParser, listing: bool = False) -> None:
    cmd.add_argument("--json", action="store_true", help="print JSON" + (" (one array)" if listing else ""))
    if listing:
        cmd.add_argument("--ids", action="store_true", help="print only the ids, one a line")


def add_kb_commands(kb: Any, common: argparse.ArgumentParser) -> None:
    kb_list = kb.add_parser("list", parents=[common], help="list knowledge bases: id, name, embedding profile")
    kb_list.add_argument("--workspace", required=True, help="workspace id")
    kb_list.add_argument("--name", help="only the knowledge base of this name")
    add_output_options(kb_list, listing=True)
    kb_list.set_defaults(func=_kb_list)
    for name, func, text in (("show", _kb_show, "a knowledge base with its counts, as JSON"),
                             ("delete", _kb_delete, "delete a knowledge base: documents, chunks, vectors, index")):
        cmd = kb.add_parser(name, parents=[common], help=text)
        cmd.add_argument("kb", help="knowledge base id or name")
        cmd.add_argument("--workspace", required=True, help="workspace id")
        add_output_options(cmd)
        cmd.set_defaults(func=func)
        if name == "delete":
            cmd.add_argument("--yes", "-y", action="store_true",
                             help="do not ask (needed when stdin is not a terminal)")
    sweep = kb.add_parser("sweep-cache", parents=[common],
                          help="reclaim embedding-cache entries no chunk uses (AWS: give old entries an expiry)")
    add_output_options(sweep)
    sweep.set_defaults(func=_kb_sweep_cache)


def add_key_commands(keys: Any, common: argparse.ArgumentParser) -> None:
    listing = keys.add_parser("list", parents=[common], help="list API keys (ids, principals, reach, status)")
    add_output_options(listing, listing=True)
    listing.set_defaults(func=_keys_list)
    revoke = keys.add_parser("revoke", parents=[common], help="revoke an API key (it answers 401 at once)")
    revoke.add_argument("key_id", help="the key's id (agentkb keys list)")
    add_output_options(revoke)
    revoke.set_defaults(func=_keys_revoke)
