"""SecretStore on Secrets Manager through Powertools Parameters (cached for 5 minutes per execution environment)."""

from __future__ import annotations

from agentkb.adapters.aws_errors import store_failure
from agentkb.config import ConfigurationError

MAX_AGE_S = 300


class AwsSecretStore:
    """The API key pepper: the secret's string value, as UTF-8 bytes."""

    def __init__(self, secret_arn: str | None) -> None:
        if not secret_arn:
            raise ConfigurationError("AGENTKB_SECRET_ARN is required with AGENTKB_BACKEND=aws")
        self.secret_arn = secret_arn

    def key_pepper(self) -> bytes:
        from aws_lambda_powertools.utilities.parameters import get_secret

        try:
            value = get_secret(self.secret_arn, max_age=MAX_AGE_S)
        except Exception as exc:  # Powertools wraps botocore errors in GetParameterError
            raise store_failure(exc.__cause__ or exc, store="secrets") from exc
        if isinstance(value, bytes):
            return value
        if not value:
            raise ConfigurationError("the key pepper secret is empty")
        return str(value).encode("utf-8")
