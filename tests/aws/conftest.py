"""Fixtures of the AWS adapter tests (defined in aws_env.py, importable by the tests)."""

from aws_env import aws, aws_settings  # noqa: F401
