"""Fixtures of the contract suites: the Index engines (contract_engines.py) and every port of both engines
(port_engines.py), importable by the tests."""

from contract_engines import engine  # noqa: F401
from graph_engines import both  # noqa: F401,E402
from port_engines import ports  # noqa: F401
