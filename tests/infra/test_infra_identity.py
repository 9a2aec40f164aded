"""OAuth access tokens on AWS: the CDK context (oidcIssuer/oidcAudience/oidcWorkspacesClaim, or cognito=true),
the settings every function receives, the Cognito issuer the stack can create, and cdk-nag + checkov on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cdk_nag import AwsSolutionsChecks

from infra.app import build_app, new_app
from infra.config import DeploymentConfig
from tests.infra.test_infra_checkov import scan

COGNITO = {"bundling": "skip", "cognito": "true", "cognitoWorkspaces": "demo,team"}
EXTERNAL = {"bundling": "skip", "oidcIssuer": "https://login.example.com/tenant/v2.0", "oidcAudience": "api://agentkb",
            "oidcWorkspacesClaim": "agentkb_workspaces", "oidcConsoleClientId": "console-spa",
            "oidcConsoleScope": "openid api://agentkb/api:read"}


def synth(context: dict[str, Any], outdir: Path) -> tuple[Any, dict[str, dict[str, Any]]]:
    app = build_app(context=context, outdir=str(outdir))
    app.synth()  # raises on an unacknowledged cdk-nag error
    templates = {p.name.split(".")[0]: json.loads(p.read_text()) for p in outdir.glob("*.template.json")}
    return app, templates


def of_type(template: dict[str, Any], cfn_type: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == cfn_type]


def function_environments(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [f["Properties"]["Environment"]["Variables"] for f in of_type(template, "AWS::Lambda::Function")
            if "AGENTKB_BACKEND" in f["Properties"].get("Environment", {}).get("Variables", {})]


@pytest.mark.parametrize("context", [
    {"cognito": "true"}, {"cognito": "true", "cognitoWorkspaces": "demo", "oidcIssuer": "https://x.example"},
    {"oidcIssuer": "http://idp.example.com", "oidcAudience": "a"}, {"oidcIssuer": "https://idp.example.com"},
    {"oidcIssuer": "https://idp.example.com", "oidcAudience": "a", "apiKeyRequired": "true"},
    {"cognito": "true", "cognitoWorkspaces": "bad/id"}, {"oidcConsoleClientId": "console-spa"},
    {"cognito": "true", "cognitoWorkspaces": "demo", "oidcConsoleClientId": "console-spa"},
])
def test_token_settings_that_fail_fast(context: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        DeploymentConfig.from_node(new_app(context=context).node)


def test_by_default_no_function_accepts_tokens(synthesized: Any) -> None:
    for env in function_environments(synthesized.api_json):
        assert not any(name.startswith("AGENTKB_OIDC_") for name in env)
    assert of_type(synthesized.data_json, "AWS::Cognito::UserPool") == []


def test_an_external_issuer_reaches_every_function(tmp_path: Path) -> None:
    _, templates = synth(EXTERNAL, tmp_path)
    api = next(t for name, t in templates.items() if name.endswith("-api"))
    environments = function_environments(api)
    assert len(environments) == 4
    for env in environments:
        assert (env["AGENTKB_OIDC_ISSUER"], env["AGENTKB_OIDC_AUDIENCE"], env["AGENTKB_OIDC_WORKSPACES_CLAIM"]) == (
            EXTERNAL["oidcIssuer"], EXTERNAL["oidcAudience"], EXTERNAL["oidcWorkspacesClaim"])
        # the console's public client id and scope: names, never a secret (there is none for a public client)
        assert (env["AGENTKB_OIDC_CONSOLE_CLIENT_ID"], env["AGENTKB_OIDC_CONSOLE_SCOPE"]) == (
            "console-spa", EXTERNAL["oidcConsoleScope"])
        assert "AGENTKB_OIDC_CONSOLE_NAME" not in env and "AGENTKB_OIDC_SCOPE_PREFIX" not in env


def test_cognito_issuer_is_created_wired_in_and_clean(tmp_path: Path) -> None:
    app, templates = synth(COGNITO, tmp_path)
    data = next(t for name, t in templates.items() if name.endswith("-data"))
    api = next(t for name, t in templates.items() if name.endswith("-api"))
    (pool,) = of_type(data, "AWS::Cognito::UserPool")
    assert pool["Properties"]["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    (server,) = of_type(data, "AWS::Cognito::UserPoolResourceServer")
    assert server["Properties"]["Identifier"] == "agentkb"
    assert sorted(s["ScopeName"] for s in server["Properties"]["Scopes"]) == [
        "api:read", "api:write", "workspace:demo", "workspace:team"]
    (client,) = of_type(data, "AWS::Cognito::UserPoolClient")
    assert client["Properties"]["AllowedOAuthFlows"] == ["client_credentials"]
    assert client["Properties"]["GenerateSecret"] is True
    assert len(of_type(data, "AWS::Cognito::UserPoolDomain")) == 1
    assert {"OidcIssuer", "TokenEndpoint", "AgentClientId", "HowToGetAToken"} <= set(data["Outputs"])
    for env in function_environments(api):
        assert env["AGENTKB_OIDC_WORKSPACES_CLAIM"] == "scope" and env["AGENTKB_OIDC_SCOPE_PREFIX"] == "agentkb/"
        assert "AGENTKB_OIDC_ISSUER" in env and "AGENTKB_OIDC_AUDIENCE" in env
    report = AwsSolutionsChecks().validate_scope(app)
    assert [(v.rule_name, [r.construct_path for r in v.violating_resources]) for v in report.violations] == []
    failed = [(f["check_id"], f["resource"]) for r in scan(tmp_path) for f in r["results"]["failed_checks"]]
    assert failed == []
