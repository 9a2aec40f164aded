"""SecretStore on Secrets Manager through Powertools Parameters (cached for 5 minutes per execution environment)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

from agentkb.adapters.aws.aws_errors import store_failure
from agentkb.config import ConfigurationError

MAX_AGE_S = 300


class AwsSecretStore:
    """The API key pepper: the secret's string value, as UTF-8 bytes.

    `client` builds the Secrets Manager client (the process's shared session); without it Powertools builds its own.
    """

    def __init__(self, secret_arn: str | None, client: Callable[[], Any] | None = None) -> None:
        if not secret_arn:
            raise ConfigurationError("AGENTKB_SECRET_ARN is required with AGENTKB_BACKEND=aws")
        self.secret_arn = secret_arn
        self._client = client

    @cached_property
    def _provider(self) -> Any:
        from aws_lambda_powertools.utilities.parameters import SecretsProvider

        return SecretsProvider(boto3_client=self._client() if self._client else None)

    def key_pepper(self) -> bytes:
        try:
            value = self._provider.get(self.secret_arn, max_age=MAX_AGE_S)
        except Exception as exc:  # Powertools wraps botocore errors in GetParameterError (raised inside its except:
            # the botocore error is the context, not the cause), so classify the original
            raise store_failure(exc.__cause__ or exc.__context__ or exc, store="secrets") from exc
        if isinstance(value, bytes):
            return value
        if not value:
            raise ConfigurationError("the key pepper secret is empty")
        return str(value).encode("utf-8")
