"""The in-memory OpenSearch lives in testkit/fake_opensearch.py (the benchmarks use it too); its names stay
importable from here."""

from testkit.fake_opensearch import FakeOpenSearch, analyze, matches

__all__ = ["FakeOpenSearch", "analyze", "matches"]
