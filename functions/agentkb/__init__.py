"""agentkb: the knowledge service for AI agents."""
