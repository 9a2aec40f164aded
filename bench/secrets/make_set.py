"""Write bench/secrets/labelled.jsonl: synthetic secrets of the providers' documented shapes (random characters,
never real keys) and plain text that must pass, one {"id", "label", "kind", "text"} per line.

    .venv/bin/python -m bench.secrets.make_set      (seeded: the same file every run)
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).with_name("labelled.jsonl")
rng = random.Random(20261201)
ALNUM, UPPER_NUM = string.ascii_letters + string.digits, string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"


def rand(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64url(json.dumps({"sub": rand(string.digits, 10), "iat": rng.randint(1e9, 2e9)}).encode())
    return f"{header}.{claims}.{b64url(rng.randbytes(32))}"


def pem(header: str) -> str:
    body = "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(3))
    return f"{header}\n{body}\n{header.replace('BEGIN', 'END').replace('begin', 'end')}"


def aws_secret() -> str:
    return rand(B64, 40)


SECRETS: dict[str, list[Callable[[], str]]] = {
    "aws_access_key_id": [lambda: f"AWS_ACCESS_KEY_ID=AKIA{rand(UPPER_NUM, 16)}",
                          lambda: f"The deploy user's key is ASIA{rand(UPPER_NUM, 16)}, rotate it monthly."],
    "aws_secret_access_key": [lambda: f"aws_secret_access_key = {aws_secret()}",
                              lambda: f"secret_access_key = {aws_secret()}",
                              lambda: f"SecretAccessKey: \"{aws_secret()}\"",
                              lambda: f"Use the secret key {aws_secret()} with the staging user.",
                              lambda: f"For the bucket sync, Jane pasted {aws_secret()} in the channel."],
    "github_token": [lambda: f"GITHUB_TOKEN=ghp_{rand(ALNUM, 36)}", lambda: f"oauth: gho_{rand(ALNUM, 36)}",
                     lambda: f"export GH_TOKEN=github_pat_{rand(ALNUM, 22)}_{rand(ALNUM, 59)}"],
    "gitlab_token": [lambda: f"CI uses glpat-{rand(ALNUM + '_-', 20)} for the mirror"],
    "slack_token": [lambda: f"SLACK_BOT_TOKEN=xoxb-{rand(string.digits, 12)}-{rand(string.digits, 13)}-"
                            f"{rand(ALNUM, 24)}",
                    lambda: f"user token xoxp-{rand(string.digits, 12)}-{rand(string.digits, 12)}-"
                            f"{rand(string.digits, 13)}-{rand('0123456789abcdef', 32)}",
                    lambda: f"app token: xapp-1-A{rand(UPPER_NUM, 10)}-{rand(string.digits, 13)}-"
                            f"{rand('0123456789abcdef', 64)}",
                    lambda: f"the browser session cookie token was xoxc-{rand(string.digits, 12)}-"
                            f"{rand(string.digits, 12)}-{rand(string.digits, 13)}-{rand('0123456789abcdef', 64)}"],
    "slack_webhook": [lambda: f"post to https://hooks.slack.com/services/T{rand(UPPER_NUM, 8)}/B{rand(UPPER_NUM, 8)}/"
                              f"{rand(ALNUM, 24)}"],
    "stripe_key": [lambda: f"STRIPE_SECRET=sk_live_{rand(ALNUM, 24)}",
                   lambda: f"restricted: rk_live_{rand(ALNUM, 24)}"],
    "google_api_key": [lambda: f"maps key AIza{rand(ALNUM + '_-', 35)} in the web app"],
    "openai_key": [lambda: f"OPENAI_API_KEY=sk-proj-{rand(ALNUM + '_-', 48)}"],
    "jwt": [lambda: f"Authorization: Bearer {jwt()}", lambda: f"the session cookie held {jwt()}"],
    "private_key": [lambda: pem("-----BEGIN RSA PRIVATE KEY-----"), lambda: pem("-----BEGIN OPENSSH PRIVATE KEY-----"),
                    lambda: pem("-----BEGIN PRIVATE KEY-----"), lambda: pem("-----begin rsa private key-----"),
                    lambda: pem("-----BEGIN  RSA  PRIVATE KEY-----"), lambda: pem("-----BEGIN EC PRIVATE KEY-----"),
                    lambda: pem("----- BEGIN PRIVATE KEY -----")],
    "password_in_url": [lambda: f"DATABASE_URL=postgres://app:{rand(ALNUM, 16)}@db.internal:5432/app",
                        lambda: f"clone from https://deploy:{rand(ALNUM, 20)}@git.example.org/repo.git"],
    "credential_assignment": [lambda: f'api_key = "{rand(ALNUM, 32)}"', lambda: f"password: {rand(ALNUM + '!#%', 14)}",
                              lambda: f"client_secret={rand(ALNUM, 40)}", lambda: f'{{"apiKey": "{rand(ALNUM, 32)}"}}',
                              lambda: f"db_pass = {rand(ALNUM + '!#%', 16)}"],
}


def clean_texts() -> list[tuple[str, str]]:
    sha = rng.randbytes(32).hex()
    git = rng.randbytes(20).hex()
    png = base64.b64encode(rng.randbytes(600)).decode()
    return [
        ("prose", "The password policy requires rotation every 90 days and a second factor for admins."),
        ("prose", "Set password=changeme in the dev compose file only; production reads it from the vault."),
        ("prose", "The AWS key rotation runbook lives in docs/keys.md; ask the platform team for access."),
        ("prose", "The token bucket refills at 10 tokens per second, with a burst of 40."),
        ("prose", "We use scikit-learn (sk-learn) for the churn model and retrain it weekly."),
        ("prose", "Secrets are stored in AWS Secrets Manager and fetched by the Lambda at cold start."),
        ("prose", "Deploys wait for the Tuesday window; the payments team owns rollbacks and the on-call rota."),
        ("prose", "Reranking sends the top candidates to a cross-encoder, which reorders them by relevance."),
        ("code", "api_key: ${API_KEY} comes from the environment"),
        ("code", 'password = os.environ["DB_PASSWORD"]'),
        ("code", "def rotate_secret(client, secret_id: str) -> None:\n    client.rotate_secret(SecretId=secret_id)"),
        ("code", "for (const item of items) { total += item.price * item.quantity; }"),
        ("code", 'token = request.headers.get("Authorization", "").removeprefix("Bearer ")'),
        ("code", "SELECT id, name FROM users WHERE created_at > now() - interval '7 days';"),
        ("code", "functions/agentkb/services/search_routes.py:42: def search_knowledge(request, principal, deps)"),
        ("hash", f"sha256: {sha}"), ("hash", f"content hash {rng.randbytes(32).hex()} unchanged, skipped"),
        ("hash", f"commit {git}\nAuthor: Dev <dev@example.com>"), ("hash", f"fixed in {git[:12]} (see the PR)"),
        ("hash", f"https://github.com/org/repo/blob/{rng.randbytes(20).hex()}/README.md"),
        ("hash", f"md5 {rng.randbytes(16).hex()}"), ("hash", f"etag: \"{rng.randbytes(16).hex()}\""),
        ("uuid", f"request id {uuid.UUID(bytes=rng.randbytes(16))} failed with 503"),
        ("uuid", f'{{"document_id": "{uuid.UUID(bytes=rng.randbytes(16))}", "chunk": 3}}'),
        ("base64_image", f"![chart](data:image/png;base64,{png})"),
        ("base64_image", f'<img src="data:image/jpeg;base64,{png}">'),
        ("prose", "See https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html for keys."),
        ("prose", "The API key header is x-api-key; keys start with akb_ and are shown once."),
        ("prose", "An OpenSSH private key begins with a BEGIN OPENSSH header line; never paste it here."),
        ("code", "version: 3.11.4-slim-bookworm, arch: linux/amd64, digest pinned in the Dockerfile"),
    ]


# Written after the detector's rules were fixed and never tuned on: the held-out split.
HELD_OUT_SECRETS: list[tuple[str, Callable[[], str]]] = [
    ("aws_access_key_id", lambda: f'"AccessKeyId": "AKIA{rand(UPPER_NUM, 16)}",'),
    ("aws_secret_access_key", lambda: f"AWS_SECRET_ACCESS_KEY={aws_secret()}"),
    ("aws_secret_access_key", lambda: f"the new one is {aws_secret()} (expires Friday)"),
    ("aws_secret_access_key", lambda: f"- secretKey: {aws_secret()}"),
    ("github_token", lambda: f"git clone https://x-access-token:ghs_{rand(ALNUM, 36)}@github.com/org/repo"),
    ("github_token", lambda: f"My PAT: github_pat_{rand(ALNUM, 22)}_{rand(ALNUM, 59)}"),
    ("slack_token", lambda: f"curl -H 'Authorization: Bearer xoxb-{rand(string.digits, 11)}-{rand(string.digits, 13)}-"
                            f"{rand(ALNUM, 24)}' https://slack.com/api/chat.postMessage"),
    ("slack_token", lambda: f"SLACK_APP_TOKEN: xapp-1-A{rand(UPPER_NUM, 10)}-{rand(string.digits, 13)}-"
                            f"{rand('0123456789abcdef', 64)}"),
    ("stripe_key", lambda: f"stripe.api_key = 'sk_live_{rand(ALNUM, 24)}'"),
    ("google_api_key", lambda: "<script src=\"https://maps.googleapis.com/maps/api/js?key="
                               f"AIza{rand(ALNUM + '_-', 35)}\">"),
    ("openai_key", lambda: f"client = OpenAI(api_key=\"sk-proj-{rand(ALNUM + '_-', 56)}\")"),
    ("jwt", lambda: f"id_token={jwt()}"),
    ("private_key", lambda: pem("-----BEGIN ENCRYPTED PRIVATE KEY-----")),
    ("private_key", lambda: pem("-----Begin Rsa Private Key-----")),
    ("password_in_url", lambda: f"redis://default:{rand(ALNUM, 24)}@cache.internal:6379/0"),
    ("credential_assignment", lambda: f"DB_PASSWORD='{rand(ALNUM + '!#%&', 18)}'"),
    ("credential_assignment", lambda: f"<add key=\"ClientSecret\" value=\"{rand(ALNUM, 32)}\" />"),
    ("credential_assignment", lambda: f"export API_KEY={rand(ALNUM, 32)}"),
]


def held_out_clean() -> list[tuple[str, str]]:
    return [
        ("prose", "Rotate the API key every quarter and store it in the vault, never in the repository."),
        ("prose", "If the password reset email does not arrive, check the spam folder and try again."),
        ("prose", "Our Slack workspace uses the #incidents channel for paging; tokens are issued by IT."),
        ("code", "const apiKey = process.env.STRIPE_API_KEY;"),
        ("code", "secret = get_secret(name=settings.secret_arn, max_age=300)"),
        ("code", "if not password: raise ValueError('password is required')"),
        ("code", "docker pull public.ecr.aws/lambda/python:3.11@sha256:" + rng.randbytes(32).hex()),
        ("hash", "Merge pull request #412 from org/fix-retries (" + rng.randbytes(20).hex()[:7] + ")"),
        ("hash", "integrity: sha512-" + base64.b64encode(rng.randbytes(64)).decode()),
        ("uuid", f"trace_id={uuid.UUID(bytes=rng.randbytes(16))} span_id={rng.randbytes(8).hex()}"),
        ("base64_image", "background: url(data:image/gif;base64,"
                         + base64.b64encode(rng.randbytes(300)).decode() + ")"),
        ("prose", "See docs/operations-aws.md#rotating-the-pepper for the procedure, and ask in #platform."),
    ]


def main() -> None:
    rows = []
    for kind, makers in SECRETS.items():
        for i, make in enumerate(makers):
            for copy in range(2):
                rows.append({"id": f"{kind}-{i}-{copy}", "label": 1, "kind": kind, "text": make()})
    for i, (kind, text) in enumerate(clean_texts()):
        rows.append({"id": f"clean-{kind}-{i}", "label": 0, "kind": kind, "text": text})
    for i, (kind, make) in enumerate(HELD_OUT_SECRETS):
        rows.append({"id": f"heldout-{kind}-{i}", "label": 1, "kind": kind, "text": make(), "split": "heldout"})
    for i, (kind, text) in enumerate(held_out_clean()):
        rows.append({"id": f"heldout-clean-{kind}-{i}", "label": 0, "kind": kind, "text": text, "split": "heldout"})
    OUT.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"{len(rows)} rows ({sum(r['label'] for r in rows)} secrets) -> {OUT}")


if __name__ == "__main__":
    main()
