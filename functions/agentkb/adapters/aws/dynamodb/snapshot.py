"""SnapshotStore on DynamoDB (+ S3 for large bodies): the exact response bytes, first writer wins.

  snapshot table  SNAP#<snapshot id>  #SNAPSHOT  workspace_id, run_id, attempt_id, request_hash, created_at,
                                                 body (B, <= 350 KB) | body_key (S3 object of a larger body)
The S3 key carries the body's sha256, so a losing racer never overwrites the object the winner points at.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from agentkb.adapters.aws.dynamodb.tables import get_s, guarded, key, s
from agentkb.adapters.aws.errors import is_conditional_failure, store_failure
from agentkb.models.snapshot import StoredSnapshot

INLINE_LIMIT = 350 * 1024  # DynamoDB items stop at 400 KB; leave room for the other attributes
STORE = "snapshot"


class DynamoDbSnapshotStore:
    def __init__(self, client: Callable[[], Any], table: str, s3: Callable[[], Any], bucket: str | None,
                 versions: Any) -> None:
        self._client = client
        self.table = table
        self._s3 = s3
        self.bucket = bucket
        self.versions = versions  # the catalog: index_version lives beside the knowledge base

    def get(self, snapshot_id: str) -> StoredSnapshot | None:
        item = guarded(STORE, lambda: self._client().get_item(
            TableName=self.table, Key=key(f"SNAP#{snapshot_id}", "#SNAPSHOT"), ConsistentRead=True)).get("Item")
        return self._snapshot(item) if item else None

    def put_if_absent(self, snapshot: StoredSnapshot) -> StoredSnapshot:
        item: dict[str, Any] = {
            **key(f"SNAP#{snapshot.snapshot_id}", "#SNAPSHOT"), "snapshot_id": s(snapshot.snapshot_id),
            "workspace_id": s(snapshot.workspace_id), "run_id": s(snapshot.run_id),
            "attempt_id": s(snapshot.attempt_id), "request_hash": s(snapshot.request_hash),
            "created_at": s(snapshot.created_at)}
        if len(snapshot.body) <= INLINE_LIMIT:
            item["body"] = {"B": snapshot.body}
        else:
            if not self.bucket:
                raise store_failure(RuntimeError("no bucket configured for large snapshots"), store=STORE)
            digest = hashlib.sha256(snapshot.body).hexdigest()
            body_key = f"snapshots/{snapshot.workspace_id}/{snapshot.snapshot_id}/{digest}.json"
            guarded("s3", lambda: self._s3().put_object(Bucket=self.bucket, Key=body_key, Body=snapshot.body,
                                                        ContentType="application/json"))
            item["body_key"] = s(body_key)
        try:
            self._client().put_item(TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)")
        except Exception as exc:
            if not is_conditional_failure(exc):
                raise store_failure(exc, store=STORE) from exc
            existing = self.get(snapshot.snapshot_id)
            if existing is not None:
                return existing
        return snapshot

    def index_version(self, knowledge_base_id: str) -> int | None:
        result: int | None = self.versions.index_version(knowledge_base_id)
        return result

    def _snapshot(self, item: dict[str, Any]) -> StoredSnapshot:
        if "body" in item:
            body = bytes(item["body"]["B"])
        else:
            body_key = get_s(item, "body_key") or ""
            response = guarded("s3", lambda: self._s3().get_object(Bucket=self.bucket, Key=body_key))
            body = response["Body"].read()
        return StoredSnapshot(get_s(item, "snapshot_id") or "", get_s(item, "workspace_id") or "",
                              get_s(item, "run_id") or "", get_s(item, "attempt_id") or "",
                              get_s(item, "request_hash") or "", body, get_s(item, "created_at") or "")
