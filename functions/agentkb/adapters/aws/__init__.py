"""The AWS engine: DynamoDB, OpenSearch Serverless, Bedrock, S3 and Secrets Manager."""
