"""The ingest queue, its dead-letter queue and the alarm that pages when anything lands there."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.nag import checkov_skip


class IngestQueue(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetters",
            queue_name=f"{config.prefix}-ingest-dlq",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(c.DLQ_RETENTION_DAYS),
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=f"{config.prefix}-ingest",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(c.QUEUE_VISIBILITY_TIMEOUT_S),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=c.QUEUE_MAX_RECEIVE_COUNT
            ),
        )
        for queue in (self.queue, self.dead_letter_queue):
            checkov_skip(queue, "CKV_AWS_27",
                         "False positive: the queue is encrypted with SQS-managed keys (SqsManagedSseEnabled: true); "
                         "this checkov version only recognises KmsMasterKeyId.")
        self.dlq_alarm = cloudwatch.Alarm(
            self,
            "DeadLettersAlarm",
            alarm_name=f"{config.prefix}-ingest-dlq-not-empty",
            alarm_description="Ingest messages failed repeatedly and landed in the dead-letter queue.",
            metric=self.dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(1), statistic="Maximum"
            ),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
