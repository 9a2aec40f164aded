"""Fixtures of the reliability suite: `ports`, every port of one engine (embedded, and AWS on moto + the fake
OpenSearch), as the contract suites build them, for the properties that must hold on both engines."""

from tests.contract.port_engines import ports  # noqa: F401
