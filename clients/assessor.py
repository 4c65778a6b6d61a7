"""An A2A client of the green agent: send it an assessment request, follow its progress, and
return the artifacts it ends with (``results`` and ``trajectories``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import get_data_parts, get_message_text, new_data_part, new_message
from a2a.types import Role, SendMessageRequest, TaskState
from google.protobuf.json_format import MessageToDict

from netdojo.errors import NetdojoError

ENDED_BADLY = (TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_FAILED)


async def assess(
    green_url: str,
    request: dict[str, Any],
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    """Send an assessment request to a green agent; stream its progress; return its artifacts.

    ``on_episode`` gets each finished episode as streamed: ``{"episode", "trajectory"}``;
    ``token`` goes with every call, for a green agent that requires one. A request the green
    agent rejects, or an assessment that fails, raises `NetdojoError` with its reason.
    """
    artifacts: dict[str, Any] = {}
    final = ""
    message = new_message([new_data_part(request)], role=Role.ROLE_USER)
    headers = {"Authorization": f"Bearer {token}"} if token else None
    timeout = httpx.Timeout(None, connect=10.0)
    async with httpx.AsyncClient(headers=headers, timeout=timeout) as http:
        client_config = ClientConfig(streaming=True, httpx_client=http)
        async with await create_client(green_url, client_config=client_config) as client:
            async for response in client.send_message(SendMessageRequest(message=message)):
                kind = response.WhichOneof("payload")
                if kind == "status_update":
                    status = response.status_update.status
                    update = _as_dict(response.status_update.metadata)
                    if "episode" in update and on_episode is not None:
                        on_episode(update)
                    if status.state in ENDED_BADLY:
                        raise NetdojoError(get_message_text(status.message))
                    if status.HasField("message"):
                        final = get_message_text(status.message)
                elif kind == "artifact_update":
                    artifact = response.artifact_update.artifact
                    artifacts[artifact.name] = get_data_parts(list(artifact.parts))[0]
                elif kind == "task" and response.task.status.state in ENDED_BADLY:
                    raise NetdojoError(get_message_text(response.task.status.message))
    if "results" not in artifacts:
        raise NetdojoError(f"the green agent ended without results: {final}")
    return artifacts


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else MessageToDict(value)
