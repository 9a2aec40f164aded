"""The background indexer of `agentkb serve`: drains the pending-documents queue, outside any request.

It starts with the server and first resumes whatever a previous run left queued (a kill mid-index leaves the
document `indexing` and its queue entry in place); then it waits for new work (woken by enqueue, polling as a
fallback for entries written by another process, e.g. a second server on the same data directory).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import replace

from agentkb.adapters.embedded.embedder import BackgroundEmbedder, LocalEmbedder
from agentkb.adapters.embedded.sqlite.indexing import SqliteIndexingQueue, wakeup
from agentkb.api.observability import logger
from agentkb.composition import Ports
from agentkb.services.ingest.background import index_pending

POLL_S = 2.0
NICENESS = 10


def drain(ports: Ports) -> int:
    """Index every queued document; returns how many were written."""
    from agentkb.local.operator import deps

    queue = ports.indexing_queue
    if not isinstance(queue, SqliteIndexingQueue):  # on AWS the ingest queue's consumer does this
        return 0
    ingest_deps = replace(deps(ports), queue=queue)
    if isinstance(ports.embedder, LocalEmbedder):
        ingest_deps = replace(ingest_deps, embedder=BackgroundEmbedder(ports.embedder))
    written = 0
    for workspace_id, kb_id, document_id, page_starts in queue.pending():
        try:
            if index_pending(ingest_deps, workspace_id, kb_id, document_id, page_starts):
                written += 1
        except Exception:  # a store or model fault: logged, the entry stays queued and is retried at the next poll
            logger.exception("background indexing failed", extra={"document_id": document_id})
    return written


def _lower_priority() -> None:
    """Nice this thread only (Linux schedules threads: PRIO_PROCESS with a thread id); requests keep priority."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):  # not permitted here: the worker still runs, at normal priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)


def start(ports: Ports) -> threading.Thread:
    def loop() -> None:
        _lower_priority()
        while True:
            wakeup.clear()
            drain(ports)
            wakeup.wait(POLL_S)

    thread = threading.Thread(target=loop, name="agentkb-indexer", daemon=True)
    thread.start()
    return thread
