"""bench/coldstart/net.py: the cold-start bench's network stub answers real botocore and urllib3 requests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json
from bench.coldstart import net
seen = []
def responder(request):
    seen.append(net.request_key(request.method, request.host, request.path, request.headers, request.body))
    if request.host.startswith("dynamodb."):
        return net.Answer(200, {{"content-type": "application/x-amz-json-1.0"}}, b'{{"Item": {{"pk": {{"S": "k"}}}}}}')
    return net.Answer(200, {{"content-type": "application/json"}}, b'{{"hits": {{"hits": []}}}}')
net.install(responder)
import boto3, urllib3
item = boto3.client("dynamodb", region_name="eu-west-1").get_item(TableName="t1", Key={{"pk": {{"S": "k"}}}})["Item"]
found = urllib3.PoolManager().request("POST", "https://example.aoss.amazonaws.com/i/_search", body=b"{{}}",
                                      headers={{"content-type": "application/json"}}).json()
replay = net.Replay([net.exchange_record(net.Request("POST", "h", "/p", {{}}, b"1"), net.Answer(200, {{}}, b"one")),
                     net.exchange_record(net.Request("POST", "h", "/p", {{}}, b"2"), net.Answer(200, {{}}, b"two"))])
bodies = [replay(net.Request("POST", "h", "/p", {{}}, b)).body.decode() for b in (b"2", b"1", b"1")]
try:
    replay(net.Request("POST", "h", "/other", {{}}, b""))
    missing = "answered"
except RuntimeError:
    missing = "refused"
print(json.dumps({{"item": item, "found": found, "seen": seen, "bodies": bodies, "missing": missing}}))
"""


def test_the_stub_answers_botocore_and_urllib3_and_replays_by_key_and_body() -> None:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y", "AWS_EC2_METADATA_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-c", PROBE.format()], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # a signed DynamoDB call and a plain urllib3 call went through the socket pair and were parsed back
    assert result["item"] == {"pk": {"S": "k"}} and result["found"] == {"hits": {"hits": []}}
    assert result["seen"] == ["POST dynamodb.eu-west-1.amazonaws.com/ DynamoDB_20120810.GetItem t1",
                              "POST example.aoss.amazonaws.com/i/_search  "]
    # the same body gets its own answer, a repeated read the same answer again, an unknown request none
    assert result["bodies"] == ["two", "one", "one"] and result["missing"] == "refused"
