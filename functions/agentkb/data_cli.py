"""`agentkb kb list|show|delete`, `agentkb docs list|show`, `agentkb search`, `agentkb keys list|revoke`."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

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


def _kb(c: Ports, workspace: str, ref: str) -> KnowledgeBase:
    from agentkb.local.operator import resolve_kb

    return resolve_kb(c, workspace, ref)


def _documents(c: Ports, kb: KnowledgeBase) -> Iterator[Document]:
    cursor: str | None = None
    while True:
        page, cursor = c.catalog.list_documents(kb.id, PAGE_MAX, cursor)
        yield from page
        if cursor is None:
            return


def _print_listing(items: Iterable[T], as_json: bool, to_json: Callable[[T], dict[str, Any]],
                   to_row: Callable[[T], Sequence[str]]) -> int:
    """A list command's output: --json one JSON array, otherwise one tab-separated line per item."""
    if as_json:
        print(json.dumps([to_json(item) for item in items]))
    else:
        for item in items:
            print("\t".join(to_row(item)))
    return 0


def _kb_list(args: argparse.Namespace, ports: Ports) -> int:
    return _print_listing(ports.catalog.list_knowledge_bases(args.workspace), args.json, kb_json,
                          lambda kb: (kb.id, kb.name, kb.profile.key))


def _kb_show(args: argparse.Namespace, ports: Ports) -> int:
    c = ports
    kb = _kb(c, args.workspace, args.kb)
    docs = list(_documents(c, kb))
    out = {**kb_json(kb), "documents": len(docs), "chunks": sum(d.chunk_count for d in docs)}
    print(json.dumps(out, indent=None if args.json else 2))
    return 0


def _kb_delete(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.operator import OPERATOR
    from agentkb.services.knowledge_admin import delete_knowledge_base

    c = ports
    kb = _kb(c, args.workspace, args.kb)
    delete_knowledge_base(c.catalog, c.index, OPERATOR, args.workspace, kb.id)
    print(json.dumps({"deleted": kb.id, "name": kb.name}) if args.json else f"deleted {kb.id} ({kb.name})")
    return 0


def _kb_sweep_cache(args: argparse.Namespace, ports: Ports) -> int:
    import time

    done = ports.embedding_cache.sweep(time.time())
    out = {"examined": done.examined, "removed": done.removed, "stamped": done.stamped}
    print(json.dumps(out) if args.json else " ".join(f"{k}={v}" for k, v in out.items()))
    return 0


def _docs_list(args: argparse.Namespace, ports: Ports) -> int:
    c = ports
    return _print_listing(list(_documents(c, _kb(c, args.workspace, args.kb))), args.json, document_json,
                          lambda d: (d.id, d.status, str(d.chunk_count), d.name, d.source_path or ""))


def _docs_show(args: argparse.Namespace, ports: Ports) -> int:
    c = ports
    kb = _kb(c, args.workspace, args.kb)
    doc = c.catalog.get_document(kb.id, args.document) or c.catalog.find_document_by_name(kb.id, args.document)
    if doc is None:
        raise NotFound(f"no document {args.document!r} in knowledge base {kb.name!r}")
    out = document_json(doc)
    if args.content:
        out["content"] = c.catalog.document_content(kb.id, doc.id)
    print(json.dumps(out, indent=None if args.json else 2))
    return 0


def _search(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.operator import OPERATOR
    from agentkb.models.search import KnowledgeSearchRequest
    from agentkb.services.search import SearchDeps, search_knowledge

    c = ports
    kbs = [_kb(c, args.workspace, ref).id for ref in args.kb]
    request = KnowledgeSearchRequest(workspaceId=args.workspace, knowledgeBaseIds=kbs, query=args.query,
                                     topK=args.top_k, searchMode=args.mode)
    deps = SearchDeps(c.catalog, c.index, c.embedder, c.reranker, c.settings.default_search_mode)
    outcome = search_knowledge(request, OPERATOR, deps)
    if args.json:
        print(json.dumps({"data": outcome.data.model_dump(mode="json")}))
        return 0
    for r in outcome.data.results:
        snippet = " ".join(r.content.split())[:160]
        print(f"{r.rank}. {r.documentName} #{r.chunkIndex}  (score {r.rankScore:.4f}, similarity {r.similarity:.3f})"
              f"\n   {snippet}")
    if outcome.degraded:
        print(f"(degraded: {outcome.degraded})")
    return 0


def _keys_list(args: argparse.Namespace, ports: Ports) -> int:
    return _print_listing(ports.keys.list_keys(), args.json, key_json, lambda k: (
        k.key_id, k.principal, ",".join(k.workspaces), ",".join(k.scopes), "revoked" if k.revoked else "active",
        k.created_at))


def _keys_revoke(args: argparse.Namespace, ports: Ports) -> int:
    if not ports.keys.revoke_key(args.key_id):
        raise NotFound(f"no key {args.key_id!r}")
    print(json.dumps({"revoked": args.key_id}) if args.json else f"revoked {args.key_id}")
    return 0


def add_kb_commands(kb: Any, common: argparse.ArgumentParser) -> None:
    kb_list = kb.add_parser("list", parents=[common], help="list knowledge bases")
    kb_list.add_argument("--workspace", required=True)
    kb_list.add_argument("--json", action="store_true")
    kb_list.set_defaults(func=_kb_list)
    for name, func, text in (("show", _kb_show, "a knowledge base with its counts"),
                             ("delete", _kb_delete, "delete a knowledge base: documents, chunks, vectors, index")):
        cmd = kb.add_parser(name, parents=[common], help=text)
        cmd.add_argument("kb", help="knowledge base id or name")
        cmd.add_argument("--workspace", required=True)
        cmd.add_argument("--json", action="store_true")
        cmd.set_defaults(func=func)
    sweep = kb.add_parser("sweep-cache", parents=[common],
                          help="reclaim embedding-cache entries no chunk uses (AWS: give old entries an expiry)")
    sweep.add_argument("--json", action="store_true")
    sweep.set_defaults(func=_kb_sweep_cache)


def add_key_commands(keys: Any, common: argparse.ArgumentParser) -> None:
    listing = keys.add_parser("list", parents=[common], help="list API keys (ids, principals, reach, status)")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=_keys_list)
    revoke = keys.add_parser("revoke", parents=[common], help="revoke an API key (it answers 401 at once)")
    revoke.add_argument("key_id")
    revoke.add_argument("--json", action="store_true")
    revoke.set_defaults(func=_keys_revoke)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    docs = sub.add_parser("docs", help="documents of a knowledge base").add_subparsers(dest="docs_command",
                                                                                        required=True)
    listing = docs.add_parser("list", parents=[common], help="list documents with status and source path")
    show = docs.add_parser("show", parents=[common], help="one document (by id or name)")
    show.add_argument("document")
    show.add_argument("--content", action="store_true", help="include the stored text")
    for cmd, func in ((listing, _docs_list), (show, _docs_show)):
        cmd.add_argument("--workspace", required=True)
        cmd.add_argument("--kb", required=True, help="knowledge base id or name")
        cmd.add_argument("--json", action="store_true")
        cmd.set_defaults(func=func)
    search = sub.add_parser("search", parents=[common], help="search knowledge bases")
    search.add_argument("query")
    search.add_argument("--workspace", required=True)
    search.add_argument("--kb", required=True, action="append", help="knowledge base id or name (repeatable)")
    search.add_argument("--mode", choices=["hybrid", "vector"])
    search.add_argument("--top-k", type=int, default=5)
    search.add_argument("--json", action="store_true")
    search.set_defaults(func=_search)
