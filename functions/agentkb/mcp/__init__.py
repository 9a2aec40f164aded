"""`agentkb mcp`: agentkb's tools for agents over the Model Context Protocol (stdio or streamable HTTP)."""
