"""AWS test doubles shared by the test suite and the benchmarks of the AWS adapters: the in-memory OpenSearch
(fake_opensearch), the fake Bedrock runtimes (bedrock), the moto resources, environment and transaction patch
(moto_aws), a pytest-free patcher (patches), and the workspace the recorded events expect, seeded
through the real handlers (corpus). Importing it needs moto (the dev extra) and never pytest, so a
benchmark uses exactly the doubles the contract tests hold to the same contract without importing the tests.
tests/conftest.py builds its pytest fixtures (aws, aws_settings, aws_backend) on these."""
