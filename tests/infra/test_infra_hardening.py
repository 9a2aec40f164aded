"""Hardening of the deployed runtime: the Powertools layer is the version the tests ran on, every function has
reserved concurrency, and the OpenSearch collection's network policy is no wider than the functions need."""

from __future__ import annotations

import json
import re
import tomllib
from importlib.metadata import version

from infra import constants as c
from tests.infra.conftest import REPO_ROOT


def _pinned_powertools() -> str:
    deps = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [re.fullmatch(r"aws-lambda-powertools(\[[^\]]*\])?==([\w.]+)", d) for d in deps]
    found = [m.group(2) for m in pins if m]
    assert len(found) == 1, f"pyproject must pin aws-lambda-powertools exactly: {deps}"
    return found[0]


def test_the_powertools_layer_is_the_pinned_version_the_tests_run_on(synthesized):
    # Given the pin in pyproject and the package these tests import
    pinned = _pinned_powertools()
    assert version("aws-lambda-powertools") == pinned == c.POWERTOOLS_VERSION
    # Then every function takes the layer of exactly that release, never `latest`
    parameters = {name: p["Default"] for name, p in synthesized.api_json["Parameters"].items()
                  if "powertools" in p.get("Default", "")}
    assert list(parameters.values()) == [f"/aws/service/powertools/python/x86_64/python3.11/{pinned}"]
    for resource in synthesized.resources(synthesized.api_json, "AWS::Lambda::Function").values():
        layers = json.dumps(resource["Properties"]["Layers"])
        assert all(name in layers for name in parameters)
    assert "aws-lambda-powertools" in c.PROVIDED_DISTRIBUTIONS  # and the deps layer does not ship a second copy


def test_every_function_has_reserved_concurrency_and_the_queue_consumer_a_share_of_it(synthesized):
    functions = synthesized.resources(synthesized.api_json, "AWS::Lambda::Function")
    reserved = {spec.name: spec.reserved_concurrency for spec in c.FUNCTIONS}
    found = {}
    for resource in functions.values():
        name = resource["Properties"]["Handler"].split(".")[0]
        found[name] = resource["Properties"]["ReservedConcurrentExecutions"]
    assert found == reserved and all(v > 0 for v in found.values())
    assert sum(found.values()) <= 100  # the rest of a default 1,000 quota stays unreserved for the account
    (mapping,) = synthesized.resources(synthesized.api_json, "AWS::Lambda::EventSourceMapping").values()
    assert mapping["Properties"]["ScalingConfig"]["MaximumConcurrency"] == c.QUEUE_MAX_CONCURRENCY
    assert reserved["ingest"] > c.QUEUE_MAX_CONCURRENCY  # API writes are never starved by a backlog


def test_the_collection_network_policy_opens_only_the_collection_endpoint(synthesized):
    # Public access with IAM: the functions run outside a VPC and sign with SigV4; the data-access policy decides
    # who (read-only for the query roles). Nothing else is reachable: no dashboards, no other collection.
    policies = synthesized.resources(synthesized.data_json, "AWS::OpenSearchServerless::SecurityPolicy")
    (network,) = [json.loads(p["Properties"]["Policy"]) for p in policies.values()
                  if p["Properties"]["Type"] == "network"]
    assert len(network) == 1
    rule = network[0]
    assert rule["Rules"] == [{"ResourceType": "collection", "Resource": ["collection/agentkb-dev"]}]
    assert rule["AllowFromPublic"] is True and "SourceVPCEs" not in rule and "SourceServices" not in rule
    access = synthesized.resources(synthesized.data_json, "AWS::OpenSearchServerless::AccessPolicy") or \
        synthesized.resources(synthesized.api_json, "AWS::OpenSearchServerless::AccessPolicy")
    assert access, "the data-access policy (who may use the public endpoint) must exist"
