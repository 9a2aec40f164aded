"""The idempotency table, registered apart from its persistence layer: opening the database creates it without
importing Powertools' idempotency utility (and boto3 behind it), which only a claim needs."""

from __future__ import annotations

from agentkb.adapters.embedded.sqlite.db import register_schema

register_schema("idempotency", """
CREATE TABLE IF NOT EXISTS idempotency (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    expiration INTEGER NOT NULL,             -- epoch seconds (DynamoDB TTL attribute on AWS)
    in_progress_expiration INTEGER,          -- epoch milliseconds: the claiming invocation's deadline
    data TEXT,
    validation TEXT
);
CREATE INDEX IF NOT EXISTS idempotency_expiration ON idempotency (expiration);
""")
