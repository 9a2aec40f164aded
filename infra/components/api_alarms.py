"""API alarms: 5xx, throttled (429) responses counted from the access log, p99 latency; function errors."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig


class ApiAlarms(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig, api_name: str,
                 stage_name: str, access_logs: logs.ILogGroup, functions: dict[str, lambda_.Function]) -> None:
        super().__init__(scope, construct_id)
        period = Duration.minutes(c.ALARM_PERIOD_MINUTES)
        dims = {"ApiName": api_name, "Stage": stage_name}

        def api_metric(name: str, statistic: str) -> cloudwatch.Metric:
            return cloudwatch.Metric(namespace="AWS/ApiGateway", metric_name=name, dimensions_map=dims,
                                     statistic=statistic, period=period)

        throttled_filter = logs.MetricFilter(
            self, "ThrottledFilter",
            log_group=access_logs,
            metric_namespace=c.SERVICE,
            metric_name=f"{config.prefix}-api-429",
            filter_pattern=logs.FilterPattern.string_value("$.status", "=", "429"),
            metric_value="1",
            default_value=0,
        )
        self.alarms: dict[str, cloudwatch.Alarm] = {
            "5xx": self._alarm("Api5xx", f"{config.prefix}-api-5xx", "API Gateway 5xx responses",
                               api_metric("5XXError", "Sum"), c.ALARM_5XX_THRESHOLD),
            "429": self._alarm("Api429", f"{config.prefix}-api-throttled", "Throttled (429) API responses",
                               throttled_filter.metric(statistic="Sum", period=period), c.ALARM_429_THRESHOLD),
            "p99": self._alarm("ApiP99", f"{config.prefix}-api-p99-latency", "API p99 latency (ms)",
                               api_metric("Latency", "p99"), c.ALARM_P99_LATENCY_MS),
        }
        for name, function in functions.items():
            self.alarms[f"{name}-errors"] = self._alarm(
                f"{name.title()}Errors", f"{config.prefix}-{name}-errors", f"{name} function errors",
                function.metric_errors(period=period, statistic="Sum"), 0,
            )
        if config.alarm_topic_arn:
            topic = sns.Topic.from_topic_arn(self, "AlarmTopic", config.alarm_topic_arn)
            for alarm in self.alarms.values():
                alarm.add_alarm_action(actions.SnsAction(topic))

    def _alarm(self, construct_id: str, name: str, description: str, metric: cloudwatch.IMetric,
               threshold: float) -> cloudwatch.Alarm:
        return cloudwatch.Alarm(
            self, construct_id,
            alarm_name=name,
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
