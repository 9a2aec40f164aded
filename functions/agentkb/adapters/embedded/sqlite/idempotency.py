"""Powertools idempotency records in the embedded engine's SQLite database: DynamoDBPersistenceLayer's semantics.

A claim succeeds when the key is absent, its record expired, or it is an in-progress claim whose invocation
deadline passed, exactly the condition Powertools puts on DynamoDB. The check and the write share one
`BEGIN IMMEDIATE` transaction, so two processes on the same database file never both claim a key.
"""

from __future__ import annotations

import datetime as dt
import sqlite3

from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import STATUS_CONSTANTS, DataRecord

from agentkb.adapters.embedded.sqlite import idempotency_table  # noqa: F401  (its table)
from agentkb.adapters.embedded.sqlite.db import Database


def _record(row: sqlite3.Row) -> DataRecord:
    return DataRecord(idempotency_key=row["id"], status=row["status"], expiry_timestamp=row["expiration"],
                      in_progress_expiry_timestamp=row["in_progress_expiration"],
                      response_data=row["data"] or "", payload_hash=row["validation"] or "")


class SqlitePersistenceLayer(BasePersistenceLayer):
    """A Powertools persistence layer on the `idempotency` table of the embedded database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        super().__init__()  # type: ignore[no-untyped-call]

    def _get_record(self, idempotency_key: str) -> DataRecord:
        row = self.db.connection().execute("SELECT * FROM idempotency WHERE id = ?", (idempotency_key,)).fetchone()
        if row is None:
            raise IdempotencyItemNotFoundError
        return _record(row)

    def _put_record(self, data_record: DataRecord) -> None:
        now = dt.datetime.now().timestamp()
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM idempotency WHERE expiration < ?", (int(now),))  # what DynamoDB TTL does
            row = conn.execute("SELECT * FROM idempotency WHERE id = ?", (data_record.idempotency_key,)).fetchone()
            if row is not None and not (row["status"] == STATUS_CONSTANTS["INPROGRESS"]
                                        and row["in_progress_expiration"] is not None
                                        and row["in_progress_expiration"] < int(now * 1000)):
                existing = _record(row)
                self._validate_payload(data_payload=data_record, stored_data_record=existing)
                raise IdempotencyItemAlreadyExistsError(old_data_record=existing)
            conn.execute("INSERT OR REPLACE INTO idempotency (id, status, expiration, in_progress_expiration, "
                         "validation) VALUES (?, ?, ?, ?, ?)",
                         (data_record.idempotency_key, data_record.status, data_record.expiry_timestamp,
                          data_record.in_progress_expiry_timestamp,
                          data_record.payload_hash if self.payload_validation_enabled else None))

    def _update_record(self, data_record: DataRecord) -> None:
        validation = data_record.payload_hash if self.payload_validation_enabled else None
        self.db.connection().execute(
            "UPDATE idempotency SET data = ?, expiration = ?, status = ?, validation = COALESCE(?, validation) "
            "WHERE id = ?", (data_record.response_data, data_record.expiry_timestamp, data_record.status,
                             validation, data_record.idempotency_key))

    def _delete_record(self, data_record: DataRecord) -> None:
        self.db.connection().execute("DELETE FROM idempotency WHERE id = ?", (data_record.idempotency_key,))
