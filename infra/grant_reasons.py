"""Grants no AWS call of the functions' own code makes, each with the reason it is still granted.

tests/infra/test_infra_grants.py records every call each function makes across all its routes and fails on any
grant that no call uses, unless it is listed here: by action, or "<function> <action>", "<Sid> <action>",
"<function> <Sid> <action>" (Sid: the statement id infra/components/functions.py gives it).
"""

from __future__ import annotations

from types import MappingProxyType

UNEXERCISED_GRANTS = MappingProxyType({
    "logs:CreateLogStream": "The Lambda service writes the function's logs to its log group with the function's "
                            "role; the code only prints to stdout, so no call of the code makes it.",
    "logs:PutLogEvents": "The Lambda service writes the function's logs to its log group with the function's "
                         "role; the code only prints to stdout, so no call of the code makes it.",
    "xray:PutTraceSegments": "Added by Tracing.ACTIVE: the Lambda service's X-Ray daemon sends the traces with the "
                             "function's role, not the code (tests disable the tracer).",
    "xray:PutTelemetryRecords": "Added by Tracing.ACTIVE: the Lambda service's X-Ray daemon reports its telemetry "
                                "with the function's role, not the code.",
    # The SQS event source mapping (added by CDK for the ingest queue): the Lambda service polls with the role.
    **{f"ingest sqs:{action}": "The Lambda service's poller of the ingest queue's event source mapping receives, "
                               "deletes and re-times the messages with the ingest role; the code only receives "
                               "them as the handler's event." for action in (
        "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueueAttributes", "GetQueueUrl")},
    "DdbIdempotency dynamodb:GetItem": "Powertools' DynamoDB persistence layer reads a claimed record with GetItem "
                                       "only when a conditional claim fails without returning the stored item; "
                                       "DynamoDB returns it (ReturnValuesOnConditionCheckFailure), so no call of "
                                       "the suite reaches that fallback. Powertools documents the action as needed.",
})
