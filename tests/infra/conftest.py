"""Synthesize the CDK app ONCE per session (bundling=skip: code asset copied, empty deps layer)."""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aws_cdk", reason="infra tests need the `infra` extra (aws-cdk-lib, cdk-nag, cfn-lint)")
pytest.importorskip("cdk_nag")

REPO_ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

from aws_cdk import App  # noqa: E402  (after the skip and the JSII variable)
from aws_cdk.assertions import Template  # noqa: E402  (after the skip and the JSII variable)

from infra import bundling  # noqa: E402  (after the skip and the JSII variable)
from infra import constants as c  # noqa: E402  (after the skip and the JSII variable)
from infra.app import build_app  # noqa: E402  (after the skip and the JSII variable)
from infra.stacks.api_stack import ApiStack  # noqa: E402  (after the skip and the JSII variable)
from infra.stacks.data_stack import DataStack  # noqa: E402  (after the skip and the JSII variable)


@dataclass
class Synthesized:
    app: App
    outdir: Path
    data_stack: DataStack
    api_stack: ApiStack
    data: Template
    api: Template
    data_json: dict[str, Any]
    api_json: dict[str, Any]

    def resources(self, template: dict[str, Any], cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in template["Resources"].items() if v["Type"] == cfn_type}


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    # Copy the code asset only when missing, under a lock: pytest-xdist workers share the repo's .build/.
    (REPO_ROOT / ".build").mkdir(exist_ok=True)
    with open(REPO_ROOT / ".build" / ".infra-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (REPO_ROOT / c.FUNCTIONS_ASSET_DIR / "agentkb").is_dir():
            bundling.build_functions_asset()
    outdir = tmp_path_factory.mktemp("cdk.out")
    app = build_app(context={"bundling": "skip"}, outdir=str(outdir))
    app.synth()  # raises if cdk-nag reports an unacknowledged error
    data_stack = next(s for s in app.node.children if isinstance(s, DataStack))
    api_stack = next(s for s in app.node.children if isinstance(s, ApiStack))
    data_json = json.loads((outdir / f"{data_stack.artifact_id}.template.json").read_text())
    api_json = json.loads((outdir / f"{api_stack.artifact_id}.template.json").read_text())
    return Synthesized(app, outdir, data_stack, api_stack, Template.from_json(data_json),
                       Template.from_json(api_json), data_json, api_json)
