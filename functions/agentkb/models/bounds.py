"""The bounds several request models share: every request array and string has one, refused with a 400 before any
work and published in /openapi.json (`maxItems`, `maxLength`, `maxProperties`).

Each is above what any client of the upstream contracts sends (the contracts' own maxima where they state one:
20 knowledge bases and 10 tag filters in the v2 search, 200 write-back entries in OB1) and low enough that one
request's validation and work stay small: a recall naming 200,000 entities (2 MB) was 9 s of server time.
docs/reliability.md ("Request bounds") lists them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictStr

from agentkb.models.domain import TAG_SLOTS

MAX_WORKSPACE_ID = 128  # the v2 search contract's workspaceId maxLength
MAX_ID = 256  # project, owner, channel, task, flow and graph ids; entity names
MAX_KNOWLEDGE_BASE_ID = 128  # ours are UUIDs (36)
MAX_KNOWLEDGE_BASES = 20  # the v2 search contract's knowledgeBaseIds maxItems
MAX_TAG_FILTERS = 10  # the v2 search contract's tagFilters maxItems
MAX_TAG_NAME = 64
MAX_TAG_DEFINITIONS = sum(TAG_SLOTS.values())  # every tag slot of a knowledge base (17)
MAX_TEXT_TAG_VALUE = 1024
MAX_QUERY_CHARS = 32_768  # the v2 search contract's query maxLength; recall and snapshots take the same
MAX_ENTITIES_PER_KIND = 100  # people, orgs, repos, files, customers, topics: each
MAX_OPEN_KINDS = 32  # keys of an open map (OB1 entities and sensitivity: upstream names 5 kinds and 3 flags)
MAX_TIMESTAMP = 64  # an ISO 8601 / RFC 3339 date-time with a long fraction still fits
MAX_LABEL = 256  # a runtime's version, a model's provider or name

WorkspaceId = Annotated[StrictStr, Field(min_length=1, max_length=MAX_WORKSPACE_ID)]
KnowledgeBaseId = Annotated[StrictStr, Field(min_length=1, max_length=MAX_KNOWLEDGE_BASE_ID)]
