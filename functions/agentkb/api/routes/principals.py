"""Routes of the ingest function for operators: forget a principal (`DELETE /v1/principals/{principalId}`)."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, json_response
from agentkb.api.route import Routes
from agentkb.composition import Ports, get_ports
from agentkb.models.bounds import MAX_WORKSPACE_ID
from agentkb.services.access.forget import forget_principal

routes = Routes()


@routes.admin("DELETE", "/v1/principals/{principalId}", "forgetPrincipal",
              summary="Forget a person in a workspace: personal memories, traces, usage events and keys (api:admin)",
              responses={200: {"description": "What was removed, counted per kind"}, **ERRORS})
def forget_principal_route(principalId: Annotated[str, Path(min_length=1, max_length=256)],  # noqa: N803
                           workspace_id: Annotated[str, Query(min_length=1, max_length=MAX_WORKSPACE_ID)],
                           ports: Annotated[Ports, Depends(get_ports)]) -> Response[Any]:
    removed = forget_principal(ports, workspace_id, principalId, current_principal())
    return json_response(200, {"workspace_id": workspace_id, "principal_id": principalId, "removed": removed})
