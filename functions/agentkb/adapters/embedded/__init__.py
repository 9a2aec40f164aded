"""The embedded engine: SQLite (FTS5 + exact float32 vectors) and the local ONNX embedding model."""
