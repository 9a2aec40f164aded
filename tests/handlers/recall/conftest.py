"""Recall fixtures (helpers live in recall_helpers.py so test modules can import them by a unique name)."""

from tests.handlers.recall.recall_helpers import fake_embedder  # noqa: F401  (re-exported fixture)
