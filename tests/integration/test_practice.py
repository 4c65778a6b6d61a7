"""Practice mode end to end: start a scenario, fix it through the tools, grade, reset, end."""

from __future__ import annotations

from functools import partial

import anyio
import pytest
from mcp import Client

from netdojo.scenarios.generate import generate
from netdojo.servers.mcp_server import practice_server
from netdojo.servers.practice import PracticeSession

from .leftovers import our_labs

pytestmark = pytest.mark.anyio
FAMILY, LEVEL, SEED = "static-routing", 1, 5


async def _grade_until_solved(client: Client, deadline_s: float = 45) -> dict:
    with anyio.move_on_after(deadline_s):
        while True:
            grade = (await client.call_tool("grade", {})).structured_content
            if grade["solved"]:
                return grade
            await anyio.sleep(1)
    return grade


async def test_practice_session_from_start_to_end() -> None:
    before = our_labs()
    session = PracticeSession()
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    try:
        async with Client(practice_server(session)) as client:
            started = await client.call_tool(
                "start_scenario",
                {"family": FAMILY, "level": LEVEL, "seed": SEED},
                progress_callback=on_progress,
            )
            assert not started.is_error, started.content
            first_lab = session.episode.lab.name
            assert progress, "a long start reports progress"
            brief = (await client.call_tool("brief", {})).structured_content
            assert brief["seed"] == SEED and "scenario_id" not in brief
            assert brief["brief"] == generate(FAMILY, LEVEL, SEED).public.brief

            grade = (await client.call_tool("grade", {})).structured_content
            assert not grade["solved"] and grade["targets_passed"] < 1
            assert all(r["evidence"] for r in grade["targets"] + grade["guards"])
            assert "solution" not in str(grade)

            for call in generate(FAMILY, LEVEL, SEED).hidden.solution:
                result = await client.call_tool(call.tool, call.arguments)
                assert not result.is_error and result.structured_content["ok"], result.content
            solved = await _grade_until_solved(client)
            assert solved["solved"] and solved["targets_passed"] == 1.0

            reset = await client.call_tool("reset", {})
            assert reset.structured_content["seed"] == SEED
            assert session.episode.lab.name != first_lab
            assert not (await client.call_tool("grade", {})).structured_content["solved"]

            async with anyio.create_task_group() as group:
                group.start_soon(partial(session.end_when_idle, idle_s=0.5, check_every_s=0.1))
                with anyio.move_on_after(10):
                    while session.episode is not None:
                        await anyio.sleep(0.1)
                group.cancel_scope.cancel()
            assert session.episode is None, "an idle scenario is ended"
            ended = (await client.call_tool("end", {})).structured_content
            assert ended["ended"] is None
            after = await client.call_tool("grade", {})
            assert after.is_error and "start_scenario" in after.content[0].text
            bad = await client.call_tool("start_scenario", {"family": "nope", "level": 1})
            assert bad.is_error and "static-routing" in bad.content[0].text
    finally:
        await session.close()
    assert our_labs() == before
