"""SecretStore on Secrets Manager: the API key pepper, cached for 5 minutes per execution environment.

A direct GetSecretValue on the process's shared client rather than Powertools Parameters: importing the
Parameters package loads every provider it has (AppConfig, SSM, DynamoDB, ...), ~25 ms of CPU on each cold start
for one call (bench/coldstart/run.py --first-response; README Decisions).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from agentkb.adapters.aws.errors import store_failure
from agentkb.config import ConfigurationError

MAX_AGE_S = 300


class AwsSecretStore:
    """The API key pepper: the secret's string value, as UTF-8 bytes (refetched after MAX_AGE_S, so a rotated
    pepper reaches every warm environment within five minutes).

    `client` builds the Secrets Manager client (the process's shared session); without it, a default client.
    """

    def __init__(self, secret_arn: str | None, client: Callable[[], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not secret_arn:
            raise ConfigurationError("AGENTKB_SECRET_ARN is required with AGENTKB_BACKEND=aws")
        self.secret_arn = secret_arn
        self._client = client or _default_client
        self._clock = clock
        self._cached: tuple[float, bytes] | None = None
        self._lock = threading.Lock()

    def key_pepper(self) -> bytes:
        with self._lock:
            cached = self._cached
            if cached is not None and self._clock() < cached[0]:
                return cached[1]
            value = self._fetch()
            self._cached = (self._clock() + MAX_AGE_S, value)
            return value

    def _fetch(self) -> bytes:
        try:
            answer = self._client().get_secret_value(SecretId=self.secret_arn)
        except Exception as exc:  # botocore's errors: throttling -> 503, anything else -> 500 (logged)
            raise store_failure(exc, store="secrets") from exc
        value = answer.get("SecretString") or answer.get("SecretBinary")
        if not value:
            raise ConfigurationError("the key pepper secret is empty")
        return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _default_client() -> Any:
    from agentkb.adapters.aws.dynamodb.tables import aws_client

    return aws_client("secretsmanager", None)
