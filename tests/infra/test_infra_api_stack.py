"""API stack: functions, least-privilege roles, AOSS data access, routes, throttles, WAF, gateway responses, alarms."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match

from infra import constants as c
from infra.components.rest_api import GATEWAY_RESPONSES

ENV_NAMES = {
    "AGENTKB_BACKEND", "AGENTKB_OPENSEARCH_ENDPOINT", "AGENTKB_OPENSEARCH_GENERATION",
    "AGENTKB_OPENSEARCH_INDEX_PREFIX", "AGENTKB_CATALOG_TABLE", "AGENTKB_MEMORY_TABLE", "AGENTKB_GRAPH_TABLE",
    "AGENTKB_SNAPSHOT_TABLE", "AGENTKB_KEYS_TABLE", "AGENTKB_RATE_LIMIT_TABLE", "AGENTKB_IDEMPOTENCY_TABLE",
    "AGENTKB_BUCKET", "AGENTKB_SECRET_ARN", "AGENTKB_INGEST_QUEUE_URL", "AGENTKB_EMBEDDING_MODEL",
    "AGENTKB_EMBEDDING_DIMENSION", "AGENTKB_RATE_LIMIT_PER_MINUTE", "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_LOG_LEVEL",
}


def logical_id(synthesized, construct) -> str:
    return synthesized.api_stack.get_logical_id(construct.node.default_child)


def functions(synthesized) -> dict[str, dict[str, Any]]:
    fns = synthesized.api_stack.functions.functions
    return {name: synthesized.api_json["Resources"][logical_id(synthesized, fn)] for name, fn in fns.items()}


def statements(synthesized, name: str) -> list[dict[str, Any]]:
    role = synthesized.api_stack.functions.roles[name]
    policy_id = synthesized.api_stack.get_logical_id(role.node.find_child("DefaultPolicy").node.default_child)
    return synthesized.api_json["Resources"][policy_id]["Properties"]["PolicyDocument"]["Statement"]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def imported(resource: Any) -> str:
    return json.dumps(resource)


def test_four_functions_python311_traced_json_logs_with_retention(synthesized):
    fns = functions(synthesized)
    assert set(fns) == {"search", "recall", "snapshot", "ingest"}
    for name, fn in fns.items():
        props = fn["Properties"]
        assert props["Runtime"] == "python3.11"
        assert props["Handler"] == f"{name}.handler.lambda_handler"
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert props["LoggingConfig"]["LogFormat"] == "JSON"
        log_group = synthesized.api_json["Resources"][props["LoggingConfig"]["LogGroup"]["Ref"]]
        assert log_group["Properties"]["RetentionInDays"] == c.LOG_RETENTION_DAYS
        layers = json.dumps(props["Layers"])
        assert "SsmParameterValueawsservicepowertoolspythonx8664python3113370" in layers  # pinned: test_infra_hardening
        assert "DepsLayer" in layers
    params = synthesized.api_json["Parameters"]
    assert any(p.get("Default") == c.POWERTOOLS_LAYER_PARAMETER for p in params.values())


def test_code_asset_is_the_functions_build_dir_not_docker(synthesized):
    manifest = json.loads((synthesized.outdir / f"{synthesized.api_stack.artifact_id}.assets.json").read_text())
    assert not manifest.get("dockerImages")
    zipped = [f["source"]["path"] for f in manifest["files"].values() if f["source"].get("packaging") == "zip"]
    assert len(zipped) == 3  # .build/functions, .build/deps and the ingest function's own .build/deps-ingest
    code_dir = next(synthesized.outdir / p for p in zipped if (synthesized.outdir / p / "agentkb").is_dir())
    assert {"search", "recall", "snapshot", "ingest", "agentkb"} <= {d.name for d in code_dir.iterdir()}
    sources, compiled = list(code_dir.rglob("*.py")), list(code_dir.rglob("*.pyc"))
    assert len(compiled) == len(sources)  # shipped bytecode: /var/task is read-only
    assert all(int.from_bytes(p.read_bytes()[4:8], "little") == 0b01 for p in compiled)  # unchecked-hash
    fns = functions(synthesized)
    assert len({json.dumps(fn["Properties"]["Code"]) for fn in fns.values()}) == 1  # one shared code asset


def test_environment_is_one_settings_mapping(synthesized):
    envs = [fn["Properties"]["Environment"]["Variables"] for fn in functions(synthesized).values()]
    assert set(envs[0]) >= ENV_NAMES
    assert all(env == envs[0] for env in envs)
    env = envs[0]
    assert env["AGENTKB_BACKEND"] == "aws"
    assert env["AGENTKB_EMBEDDING_MODEL"] == "amazon.titan-embed-text-v2:0"
    assert env["AGENTKB_EMBEDDING_DIMENSION"] == "1024"
    assert env["AGENTKB_OPENSEARCH_GENERATION"] == "classic"
    assert env["POWERTOOLS_SERVICE_NAME"] == env["POWERTOOLS_METRICS_NAMESPACE"] == "agentkb"


def test_each_function_has_its_own_role(synthesized):
    roles = [fn["Properties"]["Role"]["Fn::GetAtt"][0] for fn in functions(synthesized).values()]
    assert len(set(roles)) == 4
    for role_id in roles:
        role = synthesized.api_json["Resources"][role_id]["Properties"]
        assert "ManagedPolicyArns" not in role


@pytest.mark.parametrize("name", ["search", "recall", "snapshot", "ingest"])
def test_iam_is_least_privilege(synthesized, name):
    for statement in statements(synthesized, name):
        actions = as_list(statement["Action"])
        resources = as_list(statement["Resource"])
        assert all(a != "*" and not a.endswith(":*") for a in actions), actions
        if "*" in resources:
            assert set(actions) <= {"xray:PutTraceSegments", "xray:PutTelemetryRecords", "bedrock:Rerank"}
        if any(a.startswith("dynamodb:") for a in actions):
            assert all("Fn::ImportValue" in r and "Tables" in r["Fn::ImportValue"] for r in resources)
        if "aoss:APIAccessAll" in actions:
            assert actions == ["aoss:APIAccessAll"]
            assert all("VectorsCollection" in imported(r) for r in resources)
        if "bedrock:InvokeModel" in actions:
            assert all("foundation-model/" in imported(r) for r in resources)


def test_bedrock_grants_match_each_function(synthesized):
    def models(name: str) -> str:
        granted = statements(synthesized, name)
        return imported([s["Resource"] for s in granted if "bedrock:InvokeModel" in as_list(s["Action"])])

    def reranks(name: str) -> bool:
        return any("bedrock:Rerank" in as_list(s["Action"]) for s in statements(synthesized, name))

    for name in ("search", "recall", "snapshot", "ingest"):
        assert "amazon.titan-embed-text-v2:0" in models(name)
    for name in ("search",):  # the only function that reranks (a snapshot's knowledge leg never does)
        assert "cohere.rerank" in models(name) and reranks(name)
    for name in ("recall", "snapshot", "ingest"):
        assert "cohere.rerank" not in models(name) and not reranks(name)


def test_dynamodb_writes_only_where_the_function_writes(synthesized):
    for spec in c.FUNCTIONS:
        granted = {}
        for statement in statements(synthesized, spec.name):
            if statement.get("Sid", "").startswith("Ddb"):
                granted[statement["Sid"]] = tuple(as_list(statement["Action"]))
        expected = {"Ddb" + t.title().replace("_", ""): actions for t, actions in spec.tables.items()}
        assert granted == expected


def test_graph_readers_may_only_fill_the_graph_hash_cache(synthesized):
    for spec in c.FUNCTIONS:
        cache = [s for s in statements(synthesized, spec.name) if s.get("Sid") == "GraphHashCache"]
        if not spec.graph_hash_cache:
            assert not cache, spec.name
            assert "dynamodb:UpdateItem" not in spec.tables.get("graph", ()) or spec.name == "ingest"
            continue
        (statement,) = cache
        assert as_list(statement["Action"]) == ["dynamodb:UpdateItem"]
        assert "Graph" in imported(statement["Resource"])
        condition = statement["Condition"]
        assert condition["ForAllValues:StringLike"] == {"dynamodb:LeadingKeys": ["G#*"]}
        assert set(condition["ForAllValues:StringEquals"]["dynamodb:Attributes"]) == {
            "pk", "sk", "hash", "hash_version", "version"}


def test_aoss_data_access_policy_read_only_for_queries_write_for_ingest(synthesized):
    (policy,) = synthesized.resources(synthesized.api_json, "AWS::OpenSearchServerless::AccessPolicy").values()
    assert policy["Properties"]["Type"] == "data"
    rendered = policy["Properties"]["Policy"]["Fn::Join"][1]
    role_ids = {n: logical_id(synthesized, r) for n, r in synthesized.api_stack.functions.roles.items()}
    # Render the Fn::Join with role logical ids in place of their ARNs, then parse it.
    text = "".join(p if isinstance(p, str) else p["Fn::GetAtt"][0] for p in rendered)
    read_rule, write_rule = json.loads(text)
    assert sorted(read_rule["Principal"]) == sorted(role_ids[n] for n in ("search", "recall", "snapshot"))
    assert write_rule["Principal"] == [role_ids["ingest"]]
    for rule in (read_rule, write_rule):
        for grant in rule["Rules"]:
            assert all(r in ("collection/agentkb-dev", "index/agentkb-dev/agentkb*") for r in grant["Resource"])
    read_perms = {p for g in read_rule["Rules"] for p in g["Permission"]}
    assert read_perms == set(c.AOSS_READ_PERMISSIONS)
    assert not any("Write" in p or "Create" in p or "Delete" in p for p in read_perms)


def test_the_memory_index_is_inside_the_data_access_policy_pattern(synthesized):
    """Ingest writes `<prefix>-memories-<dim>`; recall and snapshot read it: the policy's index pattern covers it."""
    import fnmatch

    from agentkb.adapters.aws.opensearch.memory import memory_index_name

    (policy,) = synthesized.resources(synthesized.api_json, "AWS::OpenSearchServerless::AccessPolicy").values()
    rendered = policy["Properties"]["Policy"]["Fn::Join"][1]
    role_ids = {n: logical_id(synthesized, r) for n, r in synthesized.api_stack.functions.roles.items()}
    read_rule, write_rule = json.loads("".join(p if isinstance(p, str) else p["Fn::GetAtt"][0] for p in rendered))
    names = [f"index/agentkb-dev/{memory_index_name(c.INDEX_PREFIX, d)}" for d in (256, 512, 1024)]
    for rule, roles, needed in ((read_rule, ("recall", "snapshot"), {"aoss:ReadDocument"}),
                                (write_rule, ("ingest",), {"aoss:CreateIndex", "aoss:WriteDocument"})):
        assert {role_ids[n] for n in roles} <= set(rule["Principal"])
        (index_grant,) = [g for g in rule["Rules"] if g["ResourceType"] == "index"]
        assert needed <= set(index_grant["Permission"])
        assert all(any(fnmatch.fnmatch(n, r) for r in index_grant["Resource"]) for n in names)


def test_routes_are_wired_to_their_functions(synthesized):
    api = synthesized.api_stack.service_api
    fn_ids = {n: logical_id(synthesized, f) for n, f in synthesized.api_stack.functions.functions.items()}
    wired = {}
    for verb, path, function_name, method in api.methods:
        cfn = synthesized.api_json["Resources"][synthesized.api_stack.get_logical_id(method.node.default_child)]
        assert method.resource.path == path
        assert cfn["Properties"]["HttpMethod"] == verb
        uri = imported(cfn["Properties"]["Integration"]["Uri"])
        assert fn_ids[function_name] in uri
        assert cfn["Properties"]["Integration"]["Type"] == "AWS_PROXY"
        assert cfn["Properties"].get("ApiKeyRequired", False) is False  # app authenticates X-API-Key itself
        wired[(verb, path)] = function_name
    assert wired == {(v, p): f for v, p, f, _ in c.ROUTES}
    paths = {p for _, p, _, _ in c.ROUTES}  # and one ANY per path: its 405 (test_other_methods_answer_405)
    console = len(api.console_methods)  # GET /console and /console/{proxy+} (test_infra_console.py)
    synthesized.api.resource_count_is("AWS::ApiGateway::Method", len(c.ROUTES) + len(paths) + console)


def test_other_methods_of_a_routed_path_answer_the_functions_405(synthesized):
    from agentkb.errors import MethodNotAllowed

    answered = {}
    for method in synthesized.api_stack.service_api.method_not_allowed:
        cfn = synthesized.api_json["Resources"][synthesized.api_stack.get_logical_id(method.node.default_child)]
        props = cfn["Properties"]
        assert props["HttpMethod"] == "ANY" and props["Integration"]["Type"] == "MOCK"
        assert props.get("ApiKeyRequired", False) is False and props["AuthorizationType"] == "NONE"
        (response,) = props["Integration"]["IntegrationResponses"]
        allowed = sorted(v for v, p, _, _ in c.ROUTES if p == method.resource.path)
        assert response["StatusCode"] == "405"
        assert json.loads(response["ResponseTemplates"]["application/json"]) == MethodNotAllowed(allowed).envelope()
        assert response["ResponseParameters"]["method.response.header.Allow"] == f"'{', '.join(allowed)}'"
        answered[method.resource.path] = allowed
    assert set(answered) == {p for _, p, _, _ in c.ROUTES}


def test_stage_and_method_throttles_tracing_and_json_access_logs(synthesized):
    (stage,) = synthesized.resources(synthesized.api_json, "AWS::ApiGateway::Stage").values()
    props = stage["Properties"]
    assert props["TracingEnabled"] is True
    settings = {(s["ResourcePath"], s["HttpMethod"]): s for s in props["MethodSettings"]}
    default = settings[("/*", "*")]
    assert (default["ThrottlingRateLimit"], default["ThrottlingBurstLimit"]) == (100, 200)
    assert default["LoggingLevel"] == "ERROR"
    for key, (rate, burst) in c.METHOD_THROTTLES.items():
        path, verb = key.rsplit("/", 1)
        method = settings[("/" + path.replace("/", "~1"), verb)]  # API Gateway's encoding of the path
        assert (method["ThrottlingRateLimit"], method["ThrottlingBurstLimit"]) == (rate, burst)
    access_format = json.loads(props["AccessLogSetting"]["Format"])
    assert {"requestId", "status", "ip", "responseLatency"} <= set(access_format)


def test_usage_plans_per_tier_on_the_stage(synthesized):
    plans = synthesized.resources(synthesized.api_json, "AWS::ApiGateway::UsagePlan")
    by_name = {p["Properties"]["UsagePlanName"]: p["Properties"] for p in plans.values()}
    for tier in c.USAGE_TIERS:
        plan = by_name[f"agentkb-dev-{tier.name}"]
        assert plan["Throttle"] == {"RateLimit": tier.rate, "BurstLimit": tier.burst}
        assert plan["Quota"] == {"Limit": tier.quota_per_day, "Period": "DAY"}
        assert len(plan["ApiStages"]) == 1


def test_gateway_responses_use_the_error_envelope(synthesized):
    responses = synthesized.resources(synthesized.api_json, "AWS::ApiGateway::GatewayResponse")
    by_type = {r["Properties"]["ResponseType"]: r["Properties"] for r in responses.values()}
    for required in ("DEFAULT_4XX", "DEFAULT_5XX", "THROTTLED", "UNAUTHORIZED", "ACCESS_DENIED", "REQUEST_TOO_LARGE"):
        assert required in by_type
    for response_type, status, code, retry_after in GATEWAY_RESPONSES:
        props = by_type[response_type.response_type]
        template = props["ResponseTemplates"]["application/json"]
        body = json.loads(template.replace("$context.error.messageString", '"boom"'))
        assert body == {"error": {"code": code, "message": "boom"}}
        if status:
            assert props["StatusCode"] == status
        assert ("gatewayresponse.header.Retry-After" in props["ResponseParameters"]) is retry_after
    assert by_type["THROTTLED"]["StatusCode"] == "429"


def test_waf_rate_limits_per_ip_and_per_api_key_and_is_attached_to_the_stage(synthesized):
    (acl_id, acl), = synthesized.resources(synthesized.api_json, "AWS::WAFv2::WebACL").items()
    props = acl["Properties"]
    assert props["Scope"] == "REGIONAL"
    rules = {r["Name"]: r for r in props["Rules"]}
    per_ip = rules["rate-per-ip"]["Statement"]["RateBasedStatement"]
    assert (per_ip["AggregateKeyType"], per_ip["Limit"]) == ("IP", c.WAF_LIMIT_PER_IP)
    per_key = rules["rate-per-api-key"]["Statement"]["RateBasedStatement"]
    assert per_key["AggregateKeyType"] == "CUSTOM_KEYS"
    assert per_key["CustomKeys"][0]["Header"]["Name"] == "x-api-key"
    block = rules["rate-per-api-key"]["Action"]["Block"]["CustomResponse"]
    assert block["ResponseCode"] == 429
    assert block["ResponseHeaders"][0]["Name"] == "Retry-After"
    body = json.loads(props["CustomResponseBodies"][block["CustomResponseBodyKey"]]["Content"])
    assert body["error"]["code"] == "RATE_LIMITED"
    (association,) = synthesized.resources(synthesized.api_json, "AWS::WAFv2::WebACLAssociation").values()
    assert association["Properties"]["WebACLArn"] == {"Fn::GetAtt": [acl_id, "Arn"]}
    stage_id = logical_id(synthesized, synthesized.api_stack.service_api.stage)
    assert stage_id in imported(association["Properties"]["ResourceArn"])


def test_alarms_on_5xx_throttles_and_p99_latency(synthesized):
    synthesized.api.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "5XXError", "Namespace": "AWS/ApiGateway", "Statistic": "Sum"})
    synthesized.api.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "Latency", "ExtendedStatistic": "p99", "Threshold": c.ALARM_P99_LATENCY_MS})
    synthesized.api.has_resource_properties("AWS::Logs::MetricFilter", {
        "FilterPattern": '{ $.status = "429" }',
        "MetricTransformations": [Match.object_like({"MetricName": "agentkb-dev-api-429", "MetricValue": "1"})],
    })
    synthesized.api.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "agentkb-dev-api-429", "Namespace": "agentkb", "Threshold": c.ALARM_429_THRESHOLD})


def test_ingest_consumes_the_queue_with_partial_batch_failures(synthesized):
    (mapping,) = synthesized.resources(synthesized.api_json, "AWS::Lambda::EventSourceMapping").values()
    props = mapping["Properties"]
    ingest = synthesized.api_stack.functions.functions["ingest"]
    assert props["FunctionName"] == {"Ref": logical_id(synthesized, ingest)}
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["BatchSize"] == c.QUEUE_BATCH_SIZE
    ingest_actions = {a for s in statements(synthesized, "ingest") for a in as_list(s["Action"])}
    assert {"sqs:ReceiveMessage", "sqs:DeleteMessage", "s3:GetObject"} <= ingest_actions
    assert "s3:PutObject" not in ingest_actions
