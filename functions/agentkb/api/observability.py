"""The one place for Powertools logging, tracing and metrics."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger(service="agentkb")
tracer = Tracer(service="agentkb")
metrics = Metrics(namespace="agentkb", service="agentkb")
