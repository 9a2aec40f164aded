"""What the memory contract suites share: a moto memory table and the fake OpenSearch (testkit/), importable by the
tests."""

from __future__ import annotations

from testkit.fake_opensearch import FakeOpenSearch, matches
from testkit.moto_aws import memory_table

__all__ = ["FakeOpenSearch", "matches", "memory_table"]
