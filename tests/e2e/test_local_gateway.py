"""End to end through `agentkb serve` on loopback: the demo setup, real HTTP, the same handlers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ERROR_RESPONSE, SEARCH_RESPONSE

pytestmark = pytest.mark.e2e


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkb.cli.main", *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data_dir = tmp_path_factory.mktemp("e2e")
    env = {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "POWERTOOLS_METRICS_DISABLED": "true",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "functions"),
                                          os.environ.get("PYTHONPATH", "")])}
    demo = cli("demo", "--port", "8787", env=env)
    assert demo.returncode == 0, demo.stderr
    again = cli("demo", env=env)  # idempotent: reuses the KB and the key, re-ingests nothing
    assert again.returncode == 0 and "6 documents" in again.stdout
    key = re.search(r"export AGENTKB_KEY=(\S+)", again.stdout).group(1)  # type: ignore[union-attr]
    assert key in demo.stdout
    proc = subprocess.Popen([sys.executable, "-m", "agentkb.cli.main", "serve", "--host", "127.0.0.1", "--port", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)", line).group(1))  # type: ignore[union-attr]
        kb = cli("kb", "list", "--workspace", "demo", env=env).stdout.split("\t")[0]
        yield {"base": f"http://127.0.0.1:{port}", "key": key, "kb": kb, "stdout": demo.stdout}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def call(server: dict[str, Any], method: str, path: str, body: Any = None, key: str | None = "default",
         headers: dict[str, str] | None = None, raw: bytes | None = None) -> tuple[int, dict[str, str], Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(server["base"] + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("X-API-Key", server["key"] if key == "default" else key)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            payload = response.read()
            return response.status, {k.lower(): v for k, v in response.headers.items()}, json.loads(payload or b"null")
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, json.loads(err.read() or b"null")


def test_printed_curl_answers_contract_valid_results(server: dict[str, Any]) -> None:
    curl = next(line for line in server["stdout"].splitlines() if "/api/v2/knowledge/search" in line)
    body = json.loads(re.search(r"-d '(.*)'$", curl).group(1))  # type: ignore[union-attr]
    status, headers, payload = call(server, "POST", "/api/v2/knowledge/search", body)
    assert status == 200
    SEARCH_RESPONSE.validate(payload)
    assert payload["data"]["results"][0]["documentName"] == "password-reset.md"
    assert headers["x-ratelimit-limit"] and headers["x-ratelimit-reset"].endswith("Z")


def test_health_and_openapi_need_no_key(server: dict[str, Any]) -> None:
    assert call(server, "GET", "/health", key=None)[2]["status"] == "ok"
    status, _, doc = call(server, "GET", "/openapi.json", key=None)
    assert status == 200 and doc["openapi"].startswith("3.")
    operations = {op["operationId"] for item in doc["paths"].values() for op in item.values()}
    assert {"searchKnowledge", "createKnowledgeBase", "addDocument", "deleteDocument", "listTags"} <= operations


def test_errors_over_http(server: dict[str, Any]) -> None:
    body = {"workspaceId": "demo", "knowledgeBaseIds": server["kb"], "query": "x"}
    status, _, payload = call(server, "POST", "/api/v2/knowledge/search", body, key=None)
    assert status == 401
    ERROR_RESPONSE.validate(payload)
    big = b"x" * (2 * 1024 * 1024 + 1)
    status, headers, payload = call(server, "POST", "/api/v2/knowledge/search", raw=big)
    assert status == 413 and payload["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert headers["x-ratelimit-limit"] and headers["x-ratelimit-remaining"] and headers["x-ratelimit-reset"]
    for key in (None, "akb_nosuchkey_secret"):  # a missing or bad key is a 401 first, even over 2 MiB
        status, headers, payload = call(server, "POST", "/api/v2/knowledge/search", raw=big, key=key)
        assert status == 401 and payload["error"]["code"] == "UNAUTHORIZED" and "x-ratelimit-limit" not in headers
    status, _, payload = call(server, "POST", "/api/v2/knowledge/search", raw=b"q=1",
                              headers={"Content-Type": "text/plain"})
    assert status == 415
    status, _, payload = call(server, "GET", "/no/such/route", key=None)
    assert status == 404 and payload["error"]["code"] == "NOT_FOUND"


def test_write_then_search_over_http(server: dict[str, Any]) -> None:
    kb = server["kb"]
    status, _, doc = call(server, "POST", f"/api/v2/knowledge/bases/{kb}/documents", {
        "workspaceId": "demo", "name": "e2e.md", "content": "The e2e marker word is quetzalcoatl."})
    assert status == 201
    status, _, payload = call(server, "POST", "/api/v2/knowledge/search", {
        "workspaceId": "demo", "knowledgeBaseIds": kb, "query": "quetzalcoatl", "topK": 1})
    assert payload["data"]["results"][0]["documentId"] == doc["data"]["id"]
    path = f"/api/v2/knowledge/bases/{kb}/documents/{doc['data']['id']}?workspaceId=demo"
    status, _, _ = call(server, "DELETE", path)
    assert status == 204


def test_every_printed_curl_succeeds(server: dict[str, Any]) -> None:
    """`make run` prints a curl per route: each one, pasted as printed, answers 2xx with a JSON body."""
    import shutil

    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    commands = [line for line in server["stdout"].splitlines() if line.startswith("curl ")]
    assert len(commands) >= 10
    env = {**os.environ, "AGENTKB_KEY": server["key"]}
    for command in commands:
        command = command.replace("http://127.0.0.1:8787", server["base"]).split(" | ")[0]
        out = subprocess.run(["bash", "-c", command + " -o /dev/stdout -w '\\n%{http_code}'"], env=env,
                             capture_output=True, text=True, timeout=120, check=False)
        *body, status = out.stdout.rstrip("\n").split("\n")
        assert status.startswith("2"), f"{command}\n-> {status} {' '.join(body)[:300]}"
        if "/v1/recall" in command:  # the demo ships memories: recall answers from them right away
            assert json.loads("\n".join(body))["results"], "the demo recall found nothing"
