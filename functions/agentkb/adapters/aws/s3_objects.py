"""Uploaded objects in S3 (the ObjectReader port): the ingest queue's upload notifications name bucket and key."""

from __future__ import annotations

from agentkb.adapters.aws.dynamodb.tables import ClientFactory, guarded


class S3ObjectReader:
    def __init__(self, s3: ClientFactory) -> None:
        self._s3 = s3

    def read_object(self, bucket: str, key: str) -> bytes:
        s3 = self._s3()
        body: bytes = guarded("s3", lambda: s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        return body
