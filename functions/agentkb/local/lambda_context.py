"""A Lambda context object for running the handlers outside Lambda (local gateway, tests, benchmarks)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field


@dataclass
class LocalLambdaContext:
    function_name: str = "agentkb-local"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    timeout_ms: int = 30_000
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/agentkb-local"
    log_stream_name: str = "local"
    _started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.timeout_ms - int((time.monotonic() - self._started) * 1000))
