"""`cognito=true`: a Cognito user pool that issues agentkb access tokens (client-credentials grant, for agents and
services), with a resource server `agentkb` whose scopes are `api:read`, `api:write` and one `workspace:<id>` per
workspace of `cognitoWorkspaces`, an app client allowed all of them, and a hosted domain for the token endpoint.

Cognito access tokens carry no custom claim without a (paid-tier) pre-token-generation trigger, so the functions
read the workspaces from the scopes (AGENTKB_OIDC_WORKSPACES_CLAIM=scope) and accept the app client's id as the
audience (its `client_id` claim). More app clients, each allowed fewer workspace scopes, narrow reach per agent.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_cognito as cognito
from constructs import Construct

from infra.config import DeploymentConfig
from infra.nag import acknowledge

RESOURCE_SERVER = "agentkb"
API_SCOPES = (("api:read", "Read knowledge, memories, graph and snapshots"),
              ("api:write", "Write knowledge, memories, graph and snapshots"))


class TokenIssuer(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.pool = cognito.UserPool(
            self, "UserPool", user_pool_name=f"{config.prefix}-identity", self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(username=True, email=True),
            password_policy=cognito.PasswordPolicy(min_length=14, require_digits=True, require_lowercase=True,
                                                   require_uppercase=True, require_symbols=True),
            mfa=cognito.Mfa.REQUIRED, mfa_second_factor=cognito.MfaSecondFactor(sms=False, otp=True),
            account_recovery=cognito.AccountRecovery.NONE, deletion_protection=config.retain_data,
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY)
        acknowledge(self.pool, "AwsSolutions-COG8",
                    "The pool issues client-credentials tokens to agents and services; no person signs in through "
                    "it, so threat protection (the Plus feature plan) would have no sign-ins to assess.")
        scopes = [cognito.ResourceServerScope(scope_name=name, scope_description=text) for name, text in API_SCOPES]
        scopes += [cognito.ResourceServerScope(scope_name=f"workspace:{ws}", scope_description=f"Reach {ws}")
                   for ws in config.cognito_workspaces]
        self.resource_server = self.pool.add_resource_server(
            "ResourceServer", identifier=RESOURCE_SERVER, user_pool_resource_server_name="agentkb API",
            scopes=scopes)
        self.client = self.pool.add_client(
            "AgentClient", user_pool_client_name=f"{config.prefix}-agent", generate_secret=True,
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(client_credentials=True),
                scopes=[cognito.OAuthScope.resource_server(self.resource_server, s) for s in scopes]),
            access_token_validity=Duration.hours(1), enable_token_revocation=True,
            prevent_user_existence_errors=True)
        self.domain = self.pool.add_domain(
            "Domain", cognito_domain=cognito.CognitoDomainOptions(domain_prefix=f"{config.prefix}-{Aws.ACCOUNT_ID}"))

    @property
    def issuer(self) -> str:
        return self.pool.user_pool_provider_url

    @property
    def token_endpoint(self) -> str:
        return f"{self.domain.base_url()}/oauth2/token"
