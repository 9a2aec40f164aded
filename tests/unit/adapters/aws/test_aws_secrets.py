"""The key pepper from Secrets Manager: fetched once per five minutes, failures classified like every store's."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from agentkb.adapters.aws.secrets_manager import MAX_AGE_S, AwsSecretStore
from agentkb.config import ConfigurationError
from agentkb.errors import DependencyError, ServiceUnavailable


class Client:
    def __init__(self, *answers: Any) -> None:
        self.answers, self.calls = list(answers), 0

    def get_secret_value(self, SecretId: str) -> dict[str, Any]:  # noqa: N803 (boto3's parameter name)
        assert SecretId == "arn:pepper"
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]


def store(client: Client, now: list[float]) -> AwsSecretStore:
    return AwsSecretStore("arn:pepper", lambda: client, clock=lambda: now[0])


def test_the_pepper_is_fetched_once_then_again_after_five_minutes() -> None:
    client, now = Client({"SecretString": "old"}, {"SecretString": "rotated"}), [100.0]
    secrets = store(client, now)
    assert [secrets.key_pepper(), secrets.key_pepper()] == [b"old", b"old"] and client.calls == 1
    now[0] += MAX_AGE_S
    assert secrets.key_pepper() == b"rotated" and client.calls == 2


def test_a_binary_secret_is_used_as_is() -> None:
    assert store(Client({"SecretBinary": b"\x00pepper"}), [0.0]).key_pepper() == b"\x00pepper"


def test_throttling_is_a_503_and_a_denied_read_a_500_and_neither_is_cached() -> None:
    throttled = ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "GetSecretValue")
    denied = ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "GetSecretValue")
    client = Client(throttled, denied, {"SecretString": "pepper"})
    secrets = store(client, [0.0])
    with pytest.raises(ServiceUnavailable):
        secrets.key_pepper()
    with pytest.raises(DependencyError):
        secrets.key_pepper()
    assert secrets.key_pepper() == b"pepper"


def test_an_empty_secret_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        store(Client({"SecretString": ""}), [0.0]).key_pepper()
