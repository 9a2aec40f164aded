"""DynamoDB tables, the uploads/snapshots bucket (+ its access-log bucket) and the key-pepper secret."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.nag import acknowledge, checkov_skip


class Tables(Construct):
    """One on-demand, PITR, encrypted table per store in constants.TABLES."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        self.by_name: dict[str, ddb.Table] = {}
        for name, (pk, sk, ttl) in c.TABLES.items():
            self.by_name[name] = ddb.Table(
                self,
                name.title().replace("_", "") + "Table",
                table_name=f"{config.prefix}-{name.replace('_', '-')}",
                partition_key=ddb.Attribute(name=pk, type=ddb.AttributeType.STRING),
                sort_key=ddb.Attribute(name=sk, type=ddb.AttributeType.STRING) if sk else None,
                time_to_live_attribute=ttl,
                billing_mode=ddb.BillingMode.PAY_PER_REQUEST,
                encryption=ddb.TableEncryption.AWS_MANAGED,
                point_in_time_recovery_specification=ddb.PointInTimeRecoverySpecification(
                    point_in_time_recovery_enabled=True
                ),
                deletion_protection=config.retain_data,
                removal_policy=removal,
            )
            checkov_skip(self.by_name[name], "CKV_AWS_119",
                         "Encrypted at rest with the AWS-managed DynamoDB key (TableEncryption.AWS_MANAGED); a "
                         "customer-managed key adds a key policy and per-request KMS cost and changes no access: "
                         "only the functions' roles can read the tables.")


class DocumentBucket(Construct):
    """Uploads and large snapshots: encrypted, TLS-only, versioned, private, access-logged."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        self.log_bucket = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365),
                                              noncurrent_version_expiration=Duration.days(30))],
            removal_policy=removal,
        )
        checkov_skip(self.log_bucket, "CKV_AWS_18",
                     "This is the access-log bucket itself: logging it into another bucket would need a third one, "
                     "and logging it into itself loops.")
        self.bucket = s3.Bucket(
            self,
            "Documents",
            bucket_name=config.documents_bucket_name,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            server_access_logs_bucket=self.log_bucket,
            server_access_logs_prefix="documents/",
            lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=Duration.days(30))],
            removal_policy=removal,
        )


class KeyPepper(Construct):
    """The secret pepper mixed into API key hashes; generated, never in the template."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret(
            self,
            "Secret",
            description=f"{config.prefix} API key hash pepper",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True
            ),
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        checkov_skip(self.secret, "CKV_AWS_149",
                     "Encrypted with the AWS-managed aws/secretsmanager key; only the four function roles may read "
                     "it (GetSecretValue on this ARN), so a customer-managed key would change no access.")
        acknowledge(self.secret, "AwsSolutions-SMG4",
                    "Rotating the pepper would invalidate every stored API key hash; rotation is a planned "
                    "re-keying procedure (docs/operations-infra.md), not an automatic schedule.")
