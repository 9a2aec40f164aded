"""Records every AWS call each Lambda function makes, by function, while its handler runs.

Which function: each functions/<name>/handler.py `lambda_handler` is wrapped for the test, so a call made while
that handler runs (in any thread: a search's legs run on a pool the handler waits for) belongs to <name>. Calls made
outside any handler - seeding through the services, the operator CLI (`agentkb memory repair`, `keys create`),
which run on operator credentials, not a function's role - are not recorded. Each function gets its own bundle of
ports (as its own process would have), so no function is served from another one's caches.

What: every botocore API call (`BaseClient._make_api_call`, which moto still answers), the Bedrock fakes that
testkit/aws_backend.py puts where the builder asks for a bedrock client (named by botocore's own service model,
as a real client would be), and every request of the OpenSearch transport (SigV4Transport) with its endpoint.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from typing import Any

import botocore.client
import botocore.session
import pytest
from botocore import xform_name
from iam_requests import Call

from agentkb.adapters.aws.opensearch import transport as aws_http
from agentkb.adapters.aws.opensearch.transport import HttpResponse
from agentkb.api.functions import APPS
from agentkb.composition import Ports, build_ports, get_ports
from agentkb.config import get_settings
from infra import constants as c


@cache
def _service_model(service: str) -> Any:
    return botocore.session.get_session().get_service_model(service)


def _signing_name(model: Any) -> str:
    return str(model.signing_name or model.endpoint_prefix)


class Recorder:
    """`calls`: every recorded call, in order; `function`: the function whose handler is running, if any."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.function: str | None = None

    def record(self, service: str, operation: str, params: dict[str, Any]) -> None:
        if self.function is not None:
            signing = "aoss" if service == "aoss" else _signing_name(_service_model(service))
            self.calls.append(Call(self.function, service, signing, operation, dict(params)))

    def install(self, monkeypatch: pytest.MonkeyPatch, clients: dict[str, Any], opensearch: Any) -> None:
        """Wrap the handlers, botocore, the fake clients in `clients` and the OpenSearch transport."""
        for spec in c.FUNCTIONS:
            module = importlib.import_module(spec.handler.rpartition(".")[0])
            monkeypatch.setattr(module, "lambda_handler", self._attributed(spec.name, module.lambda_handler))
            monkeypatch.setitem(APPS[spec.name]().dependency_overrides, get_ports, self._own_ports(spec.name))
        original = botocore.client.BaseClient._make_api_call

        def make_api_call(client: Any, operation: str, params: dict[str, Any]) -> Any:
            self.record(client.meta.service_model.service_name, operation, params)
            return original(client, operation, params)

        monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", make_api_call)
        for service, fake in list(clients.items()):
            clients[service] = _RecordedFake(self, service, fake)
        monkeypatch.setattr(aws_http, "SigV4Transport",
                            lambda endpoint, region, **_: _RecordedTransport(self, endpoint, opensearch))

    def _own_ports(self, function: str) -> Callable[[], Ports]:
        """Each function its own bundle, as in its own process: no function reuses another's cached pepper,
        query vectors or index names, so each one makes the calls it makes when deployed."""
        bundle: list[Ports] = []

        def ports() -> Ports:
            if not bundle:
                bundle.append(build_ports(get_settings()))
            return bundle[0]

        return ports

    def _attributed(self, function: str, handler: Callable[..., Any]) -> Callable[..., Any]:
        def lambda_handler(event: Any, context: Any) -> Any:
            outer, self.function = self.function, function
            try:
                return handler(event, context)
            finally:
                self.function = outer

        return lambda_handler


class _RecordedFake:
    """A fake client whose method calls are recorded under the operation names botocore gives them."""

    def __init__(self, recorder: Recorder, service: str, fake: Any) -> None:
        self._recorder, self._service, self._fake = recorder, service, fake
        self._operations = {xform_name(op): op for op in _service_model(service).operation_names}

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._fake, name)
        if name not in self._operations:
            return method

        def call(**params: Any) -> Any:
            self._recorder.record(self._service, self._operations[name], params)
            return method(**params)

        return call


class _RecordedTransport:
    def __init__(self, recorder: Recorder, endpoint: str, inner: Any) -> None:
        self.recorder, self.endpoint, self.inner = recorder, endpoint, inner

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        self.recorder.record("aoss", method, {"endpoint": self.endpoint, "method": method, "path": path})
        return self.inner.request(method, path, body, headers)  # type: ignore[no-any-return]
