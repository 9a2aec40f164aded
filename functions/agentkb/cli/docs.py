"""`agentkb docs list|show|delete`: the documents of a knowledge base.

A document is named on the command line by its id, its name, or the path of the file it was read from (the
source path ingest recorded); a reference that fits two documents, or none, is a one-line error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agentkb.cli.data import add_output_options, document_json, documents, print_listing, resolve_kb
from agentkb.cli.io import CliError
from agentkb.composition import Ports
from agentkb.errors import NotFound
from agentkb.models.domain import Document, KnowledgeBase


def find_document(ports: Ports, kb: KnowledgeBase, ref: str) -> Document:
    """The one document `ref` names: id, name, else the file it was read from."""
    found = {d.id: d for d in (ports.catalog.get_document(kb.id, ref), ports.catalog.find_document_by_name(kb.id, ref))
             if d is not None}
    if not found:
        found = {d.id: d for d in ports.catalog.find_documents_by_source_path(
            kb.id, [str(Path(ref).expanduser().resolve())])}
    if len(found) > 1:
        listed = ", ".join(f"{d.id} ({d.name})" for d in found.values())
        raise CliError(f"{ref!r} names {len(found)} documents of knowledge base {kb.name!r}: {listed}; give an id")
    if not found:
        raise NotFound(f"no document {ref!r} in knowledge base {kb.name!r}")
    return next(iter(found.values()))


def _docs_list(args: argparse.Namespace, ports: Ports) -> int:
    kb = resolve_kb(ports, args.workspace, args.kb)
    return print_listing(documents(ports, kb), args, document_json,
                         lambda d: (d.id, d.status, str(d.chunk_count), d.name, d.source_path or ""))


def _docs_show(args: argparse.Namespace, ports: Ports) -> int:
    kb = resolve_kb(ports, args.workspace, args.kb)
    doc = find_document(ports, kb, args.document)
    out = document_json(doc)
    if args.content:
        out["content"] = ports.catalog.document_content(kb.id, doc.id)
    print(json.dumps(out, indent=None if args.json else 2))
    return 0


def _docs_delete(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.operator import OPERATOR, deps
    from agentkb.services.ingest.service import delete_document

    kb = resolve_kb(ports, args.workspace, args.kb)
    doc = find_document(ports, kb, args.document)
    delete_document(kb.id, doc.id, args.workspace, OPERATOR, deps(ports))
    print(json.dumps({"deleted": doc.id, "name": doc.name}) if args.json else f"deleted {doc.id} ({doc.name})")
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the `docs` command group to the agentkb CLI's subparsers."""
    docs = sub.add_parser("docs", help="documents of a knowledge base").add_subparsers(dest="docs_command",
                                                                                        required=True)
    listing = docs.add_parser("list", parents=[common], help="list documents: id, status, chunks, name, source path")
    show = docs.add_parser("show", parents=[common], help="one document, as JSON")
    show.add_argument("--content", action="store_true", help="include the stored text")
    delete = docs.add_parser("delete", parents=[common], help="delete one document: its chunks, vectors, index entries")
    for cmd, func in ((listing, _docs_list), (show, _docs_show), (delete, _docs_delete)):
        if cmd is not listing:
            cmd.add_argument("document", metavar="DOC",
                             help="document id, name, or the path of the file it was read from")
        cmd.add_argument("--workspace", required=True, help="workspace id")
        cmd.add_argument("--kb", required=True, help="knowledge base id or name")
        add_output_options(cmd, listing=cmd is listing)
        cmd.set_defaults(func=func)
