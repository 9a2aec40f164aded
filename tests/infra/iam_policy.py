"""The synthesized grants of each function, resolved to concrete strings and evaluated like IAM would.

From the two templates: each AWS::Lambda::Function (its name is its handler's package: `search.handler...`),
its role, every AWS::IAM::Policy attached to that role (inline role policies too), and the collection's
AWS::OpenSearchServerless::AccessPolicy rules naming the role. Intrinsics (Ref, Fn::GetAtt, Fn::Join,
Fn::ImportValue across the two stacks) resolve to the names CloudFormation would give in one account and region,
enough to match action names and resource ARNs; anything this module cannot resolve raises instead of matching.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from typing import Any

ACCOUNT = "123456789012"
PARTITION = "aws"


@dataclass(frozen=True)
class Grant:
    """One allowed (action, resource) pair of one statement; `conditions` as the template writes them."""

    function: str
    sid: str
    action: str
    resource: str
    conditions: str = ""  # JSON of the statement's Condition block ("" when it has none)
    data_access: bool = False  # a rule of the collection's data-access policy, not of the IAM role


@dataclass(frozen=True)
class Request:
    """One authorization the service performs for a call: `keys` are the request's condition-key values."""

    function: str
    action: str
    resource: str
    call: str  # the call it comes from, for messages
    keys: tuple[tuple[str, tuple[str, ...]], ...] = ()
    data_access: bool = False


class Resolver:
    """Resolves intrinsic functions of the data and api templates in one region and account."""

    def __init__(self, templates: list[dict[str, Any]], region: str) -> None:
        self.templates, self.region = templates, region
        self.exports = {o["Export"]["Name"]: (t, o["Value"]) for t in templates
                        for o in t.get("Outputs", {}).values() if "Export" in o}

    def value(self, template: dict[str, Any], node: Any) -> Any:
        if isinstance(node, list):
            return [self.value(template, n) for n in node]
        if not isinstance(node, dict):
            return node
        if len(node) != 1 or not next(iter(node)).startswith(("Ref", "Fn::")):
            return {k: self.value(template, v) for k, v in node.items()}
        (kind, arg), = node.items()
        if kind == "Fn::ImportValue":
            other, value = self.exports[self.value(template, arg)]
            return self.value(other, value)
        if kind == "Fn::Join":
            separator, parts = arg
            return separator.join(str(self.value(template, p)) for p in self.value(template, parts))
        if kind == "Ref":
            return self._ref(template, arg)
        if kind == "Fn::GetAtt":
            return self._attribute(template, *arg)
        raise ValueError(f"cannot resolve {kind}")

    def _ref(self, template: dict[str, Any], name: str) -> str:
        pseudo = {"AWS::Partition": PARTITION, "AWS::Region": self.region, "AWS::AccountId": ACCOUNT,
                  "AWS::URLSuffix": "amazonaws.com"}
        if name in pseudo:
            return pseudo[name]
        kind, props = self._resource(template, name)
        if kind == "AWS::DynamoDB::Table":
            return str(self.value(template, props["TableName"]))
        if kind == "AWS::S3::Bucket":
            return str(self.value(template, props["BucketName"]))
        if kind == "AWS::SQS::Queue":
            return f"https://sqs.{self.region}.amazonaws.com/{ACCOUNT}/{props['QueueName']}"
        if kind == "AWS::SecretsManager::Secret":  # CloudFormation names it after the logical id + 6 random chars
            return f"arn:{PARTITION}:secretsmanager:{self.region}:{ACCOUNT}:secret:{name}-AbCdEf"
        return name

    def _attribute(self, template: dict[str, Any], name: str, attribute: str) -> str:
        kind, props = self._resource(template, name)
        prefix = f"arn:{PARTITION}"
        arns = {
            ("AWS::DynamoDB::Table", "Arn"): lambda: f"{prefix}:dynamodb:{self.region}:{ACCOUNT}:table/"
                                                      f"{self._ref(template, name)}",
            ("AWS::SQS::Queue", "Arn"): lambda: f"{prefix}:sqs:{self.region}:{ACCOUNT}:{props['QueueName']}",
            ("AWS::S3::Bucket", "Arn"): lambda: f"{prefix}:s3:::{self._ref(template, name)}",
            ("AWS::Logs::LogGroup", "Arn"): lambda: f"{prefix}:logs:{self.region}:{ACCOUNT}:log-group:{name}:*",
            ("AWS::IAM::Role", "Arn"): lambda: f"{prefix}:iam::{ACCOUNT}:role/{name}",
            ("AWS::OpenSearchServerless::Collection", "Arn"):
                lambda: f"{prefix}:aoss:{self.region}:{ACCOUNT}:collection/{props['Name']}",
            ("AWS::OpenSearchServerless::Collection", "CollectionEndpoint"):
                lambda: f"https://{props['Name']}.{self.region}.aoss.amazonaws.com",
        }
        if (kind, attribute) not in arns:
            raise ValueError(f"cannot resolve Fn::GetAtt {name}.{attribute} ({kind})")
        return arns[(kind, attribute)]()

    def _resource(self, template: dict[str, Any], name: str) -> tuple[str, dict[str, Any]]:
        resource = template["Resources"][name]
        return resource["Type"], resource.get("Properties", {})


@dataclass
class FunctionGrants:
    """Every function's grants and environment, resolved; `collections` maps endpoint -> (ARN, name)."""

    grants: list[Grant] = field(default_factory=list)
    environment: dict[str, dict[str, str]] = field(default_factory=dict)
    collections: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def synthesized(cls, data: dict[str, Any], api: dict[str, Any], region: str) -> FunctionGrants:
        resolver, out = Resolver([data, api], region), cls()
        roles: dict[str, str] = {}  # role logical id -> function
        for resource in api["Resources"].values():
            if resource["Type"] == "AWS::Lambda::Function" and "Handler" in resource["Properties"]:
                props = resource["Properties"]
                function = props["Handler"].split(".")[0]
                roles[props["Role"]["Fn::GetAtt"][0]] = function
                out.environment[function] = resolver.value(api, props.get("Environment", {}).get("Variables", {}))
        for name, resource in api["Resources"].items():
            out.grants += _grants_of(resolver, api, name, resource, roles)
        for name, resource in data["Resources"].items():
            if resource["Type"] == "AWS::OpenSearchServerless::Collection":
                endpoint = resolver.value(data, {"Fn::GetAtt": [name, "CollectionEndpoint"]})
                arn = resolver.value(data, {"Fn::GetAtt": [name, "Arn"]})
                out.collections[endpoint] = (arn, resource["Properties"]["Name"])
        return out

    def allows(self, request: Request) -> list[Grant]:
        """The grants that allow `request` (empty: denied). Only Allow statements exist (checked when read)."""
        return [g for g in self.grants if g.function == request.function and g.data_access == request.data_access
                and fnmatch.fnmatchcase(request.action.lower(), g.action.lower())  # action names ignore case
                and fnmatch.fnmatchcase(request.resource, g.resource)
                and _conditions_hold(g.conditions, dict(request.keys))]


def _grants_of(resolver: Resolver, api: dict[str, Any], name: str, resource: dict[str, Any],
               roles: dict[str, str]) -> list[Grant]:
    """The grants one api-stack resource gives the functions' roles (a policy, a role's inline policies, the
    collection's data-access policy); none for any other resource."""
    props, kind = resource.get("Properties", {}), resource["Type"]
    if kind == "AWS::IAM::Policy":
        return [g for role in props["Roles"] if role["Ref"] in roles
                for g in _statements(roles[role["Ref"]], resolver.value(api, props["PolicyDocument"]))]
    if kind == "AWS::IAM::Role" and name in roles:
        if props.get("ManagedPolicyArns"):
            raise ValueError(f"{name}: managed policies are not evaluated here")
        return [g for policy in props.get("Policies", [])
                for g in _statements(roles[name], resolver.value(api, policy["PolicyDocument"]))]
    if kind == "AWS::OpenSearchServerless::AccessPolicy":
        arns = {resolver.value(api, {"Fn::GetAtt": [role, "Arn"]}): fn for role, fn in roles.items()}
        return _data_access(json.loads(resolver.value(api, props["Policy"])), arns)
    return []


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _statements(function: str, document: dict[str, Any]) -> list[Grant]:
    grants = []
    for index, statement in enumerate(document["Statement"]):
        unsupported = {"NotAction", "NotResource", "NotPrincipal"} & set(statement)
        if statement["Effect"] != "Allow" or unsupported:
            raise ValueError(f"{function}: only Allow with Action/Resource is evaluated here: {statement}")
        conditions = json.dumps(statement["Condition"], sort_keys=True) if "Condition" in statement else ""
        grants += [Grant(function, statement.get("Sid", f"#{index}"), action, resource, conditions)
                   for action in _listed(statement["Action"]) for resource in _listed(statement["Resource"])]
    return grants


def _data_access(documents: list[dict[str, Any]], functions_by_arn: dict[str, str]) -> list[Grant]:
    grants = []
    for document in documents:
        for principal in document["Principal"]:
            function = functions_by_arn[principal]  # a principal that is no function's role would be a finding
            grants += [Grant(function, document.get("Description", ""), permission, resource, data_access=True)
                       for rule in document["Rules"] for resource in rule["Resource"]
                       for permission in rule["Permission"]]
    return grants


def _conditions_hold(conditions: str, keys: dict[str, tuple[str, ...]]) -> bool:
    for operator, tests in (json.loads(conditions) if conditions else {}).items():
        for key, wanted in tests.items():
            values, patterns = keys.get(key, ()), _listed(wanted)
            match = {"StringLike": fnmatch.fnmatchcase, "StringEquals": str.__eq__}
            qualifier, _, test = operator.rpartition(":")
            if test not in match or qualifier not in ("", "ForAllValues", "ForAnyValue"):
                raise ValueError(f"condition operator {operator} is not evaluated here")
            hits = [any(match[test](v, p) for p in patterns) for v in values]
            if (qualifier == "ForAllValues" and not all(hits)) or (qualifier != "ForAllValues" and not any(hits)):
                return False
    return True
