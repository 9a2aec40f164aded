"""Fixtures of the Index contract suite (defined in contract_engines.py, importable by the tests)."""

from contract_engines import engine  # noqa: F401
