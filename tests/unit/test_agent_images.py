"""Agent images as pure logic: their recipe, their tags, the health check's view of the agent's
command line, and the green agent's answer where labs cannot run. (Builds and containers are in
tests/integration/test_images.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from netdojo import __version__
from netdojo.errors import NetdojoError
from netdojo.healthcheck import card_url, option
from netdojo.image_commands import GREEN_PORT, PURPLE_PORT, Role, agent_spec
from netdojo.labs.image.agents import (
    VENV_BIN,
    dockerfile,
    image_tag,
    runtime_dockerfile,
    runtime_tag,
)
from netdojo.labs.image.wheelhouse import constraints, digest, project_root, source
from netdojo.servers.apps import green_app
from netdojo.servers.serving import free_port, serve_uvicorn

ROOT = Path(__file__).resolve().parents[2]


def test_the_green_image_serves_the_green_agent_with_a_health_check() -> None:
    spec = agent_spec(Role.green)
    assert spec.repository == "netdojo/green"
    assert spec.entrypoint == [f"{VENV_BIN}/netdojo", "green"]
    assert spec.healthcheck[-3:] == ["-m", "netdojo.healthcheck", str(GREEN_PORT)]
    with pytest.raises(NetdojoError, match="takes no NAME"):
        agent_spec(Role.green, "noop")


def test_a_purple_image_serves_one_builtin_agent() -> None:
    spec = agent_spec(Role.purple, "heuristic")
    assert spec.repository == "netdojo/purple-heuristic"
    assert spec.entrypoint == [f"{VENV_BIN}/netdojo", "purple", "heuristic"]
    assert spec.port == PURPLE_PORT
    with pytest.raises(NetdojoError, match="built-in agents are"):
        agent_spec(Role.purple, "nobody")
    with pytest.raises(NetdojoError, match="name the built-in purple agent"):
        agent_spec(Role.purple)


def test_the_runtime_installs_the_wheelhouse_offline_and_keeps_only_the_environment() -> None:
    text = runtime_dockerfile("netdojo/device:abc", "pip-24.0-py3-none-any.whl", "s1")
    assert text.count("FROM netdojo/device:abc") == 2
    assert "/wheels/pip-24.0-py3-none-any.whl/pip install --no-index" in text
    assert f"netdojo=={__version__}" in text
    assert "COPY --from=install /opt/netdojo /opt/netdojo" in text
    final = text.split("\nFROM ")[-1]
    assert "wheels" not in final, "the wheelhouse stays in the install stage"
    assert f"ENV PATH={VENV_BIN}:" in final


def test_an_agent_image_adds_only_its_entry_point_to_the_runtime() -> None:
    spec = agent_spec(Role.purple, "noop")
    text = dockerfile(spec, "netdojo/agent-runtime:1-abc")
    assert text.splitlines()[0] == "FROM netdojo/agent-runtime:1-abc"
    assert "RUN" not in text and "COPY" not in text
    assert f"ENTRYPOINT {json.dumps(spec.entrypoint)}" in text
    assert f"--retries=3 CMD {json.dumps(spec.healthcheck)}" in text
    assert f'CMD ["--host", "0.0.0.0", "--port", "{PURPLE_PORT}"]' in text


def test_a_tag_changes_with_anything_the_image_is_made_of() -> None:
    green = agent_spec(Role.green)
    tag = image_tag(green, "sha256:base", "wheels")
    assert tag.startswith(f"netdojo/green:{__version__}-")
    assert tag == image_tag(green, "sha256:base", "wheels")
    others = {
        image_tag(green, "sha256:other", "wheels"),
        image_tag(green, "sha256:base", "other wheels"),
        image_tag(agent_spec(Role.purple, "noop"), "sha256:base", "wheels"),
    }
    assert tag not in others and len(others) == 3
    runtime = runtime_tag("sha256:base", "wheels")
    assert runtime.startswith(f"netdojo/agent-runtime:{__version__}-")
    assert runtime != runtime_tag("sha256:base", "other wheels")
    assert runtime == runtime_tag("sha256:base", "wheels")


def test_the_wheel_comes_from_this_checkout_and_its_files_make_the_hash(tmp_path: Path) -> None:
    assert project_root() == ROOT
    found = source()
    assert found.target == str(ROOT)
    names = {str(path.relative_to(ROOT)) for path in found.files}
    assert {"pyproject.toml", "labs/image/agents.py", "netdojo/cli.py"} <= names
    assert not any("__pycache__" in name or name.startswith("tests/") for name in names)
    pins = constraints()
    assert "netdojo==" not in pins and "pydantic==" in pins
    assert digest(found, pins) != digest(found, pins + "extra==1\n")


@pytest.mark.parametrize(
    ("argv", "url"),
    [
        (["netdojo", "green", "--host", "0.0.0.0", "--port", "9019"], "http://127.0.0.1:9019"),
        (["netdojo", "green", "--port=9100", "--host=10.0.0.5"], "http://10.0.0.5:9100"),
        (["docker-init", "--", "netdojo", "purple", "noop"], "http://127.0.0.1:9010"),
        (["netdojo", "green", "--host", "::1", "--port", "1"], "http://[::1]:1"),
    ],
)
def test_the_health_check_finds_the_card_from_the_agents_command_line(
    argv: list[str], url: str
) -> None:
    assert card_url(argv, default_port=9010) == f"{url}/.well-known/agent-card.json"
    assert option(["--port", "1", "--port", "2"], "--port") == "2"


@pytest.mark.anyio
async def test_a_green_agent_where_labs_cannot_run_says_what_is_missing() -> None:
    from netdojo.clients.assessor import assess

    calls: list[int] = []

    def preflight() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise NetdojoError("engine: no Docker daemon answers; fix: mount the socket")

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    request = {"participants": {"agent": "http://127.0.0.1:9"}, "config": {"episodes": 1}}
    async with serve_uvicorn(green_app("127.0.0.1", port, preflight=preflight), "127.0.0.1", port):
        async with httpx.AsyncClient() as http:
            card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
        with pytest.raises(NetdojoError, match=r"labs cannot run.*mount the socket"):
            await assess(url, request)
        with pytest.raises(NetdojoError, match="cannot read the agent card"):
            await assess(url, request)
        with pytest.raises(NetdojoError, match="cannot read the agent card"):
            await assess(url, request)
    assert len(calls) == 2, "checked again after a failure, never after a pass"
    assert "/var/run/docker.sock" in card["description"]
