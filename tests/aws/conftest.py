"""Fixtures of the AWS adapter tests (defined in aws_env.py and aws_backend.py, importable by the tests)."""

from aws_backend import aws_backend  # noqa: F401
from aws_env import aws, aws_settings  # noqa: F401
