"""A2A 0.3 peers of netdojo's 1.0 agents, over real sockets on 127.0.0.1 and without labs: the
0.3 SDK (its own environment, `tests.a2a_v0_3.env`) reads the cards, calls a built-in purple
agent and the green agent, and serves a purple agent the green agent plays an episode with."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_data_part, new_message, new_text_part
from a2a.types import Role, SendMessageRequest
from starlette.applications import Starlette

from netdojo.judges.assessment import AssessmentConfig, schedule
from netdojo.reports.records import Assessment
from netdojo.scenarios.generate import generate
from netdojo.servers import green
from netdojo.servers.a2a_app import JSONRPC_PATH
from netdojo.servers.apps import green_app
from netdojo.servers.progress import Progress, beating, heartbeat
from netdojo.servers.purple_link import Participant, PurpleAgent, read_card
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.contract import HANDOFF_KEY, EpisodeView
from tests.a2a_v0_3 import peers
from tests.integration.arena import builtin_purple
from tests.unit.episodes import record, run
from tests.unit.labless_tools import labless_tools

pytestmark = pytest.mark.anyio
TOKEN = "a-token-for-the-v03-tests"
TEXT_HANDOFF = {
    HANDOFF_KEY: {
        "episode_id": "ep-v03",
        "mode": "text",
        "tools": [{"name": "topology", "description": "Devices and links.", "input_schema": {}}],
    }
}


@asynccontextmanager
async def _served(make: Callable[[str], Starlette]) -> AsyncIterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    async with serve_uvicorn(make(url), "127.0.0.1", port):
        yield url


def _noop(token: str | None = None) -> Callable[[str], Starlette]:
    return lambda url: builtin_purple("noop", url, token)


def _green(url: str) -> Starlette:
    port = int(url.rsplit(":", 1)[1])
    return green_app("127.0.0.1", port)


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(p.get("text", "") for p in parts if p["kind"] == "text")


async def _methods_of_a_1_0_client(url: str) -> list[str]:
    """The JSON-RPC methods the SDK's 1.x client sends to the agent at ``url`` for a text-mode
    handoff."""
    sent: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            sent.append(json.loads(request.content)["method"])

    message = new_message(
        [new_text_part("brief"), new_data_part(TEXT_HANDOFF)], role=Role.ROLE_USER
    )
    async with httpx.AsyncClient(event_hooks={"request": [record]}) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        async with await create_client(url, client_config=config) as client:
            [reply] = [r async for r in client.send_message(SendMessageRequest(message=message))]
    assert reply.WhichOneof("payload") == "message"
    return sent


async def test_a_0_3_client_reads_the_card_and_a_1_0_client_still_picks_1_0() -> None:
    async with _served(_noop()) as url:
        code, [card] = await peers.client("card", url)
        purple = PurpleAgent(Participant(url=url), await read_card(Participant(url=url)))
        assert await _methods_of_a_1_0_client(url) == ["SendMessage"]
    assert code == 0, card
    assert card["url"] == f"{url}{JSONRPC_PATH}"
    assert (card["protocolVersion"], card["preferredTransport"]) == ("0.3.0", "JSONRPC")
    assert card["name"] == "netdojo-noop" and card["skills"][0]["id"] == "netdojo-noop"
    assert purple.protocol == "1.0"
    versions = [(i.protocol_binding, i.protocol_version) for i in purple.card.supported_interfaces]
    assert versions[0] == ("JSONRPC", "1.0") and ("JSONRPC", "0.3.0") in versions


@pytest.mark.parametrize("where", [[], ["--to-base-url"]], ids=["card-url", "base-url"])
async def test_a_0_3_client_plays_a_builtin_purple_agent_in_text_mode(where: list[str]) -> None:
    async with _served(_noop()) as url:
        code, events = await peers.client(
            "send", url, "--text", "h1 cannot reach h2.", "--data", json.dumps(TEXT_HANDOFF), *where
        )
    assert code == 0, events
    [reply] = events
    assert reply["event"] == "message" and reply["body"]["role"] == "agent"
    kinds = [part["kind"] for part in reply["body"]["parts"]]
    assert kinds == ["text", "data"]
    submit = {"tool": "submit", "arguments": {"summary": "did nothing"}}
    assert json.loads(_text(reply["body"]["parts"])) == submit
    assert reply["body"]["parts"][1]["data"]["action"] == submit


async def test_a_purple_agent_that_requires_a_token_says_so_to_0_3_clients() -> None:
    async with _served(_noop(TOKEN)) as url:
        _, [card] = await peers.client("card", url)
        refused, _ = await peers.client("send", url, "--data", json.dumps(TEXT_HANDOFF))
        code, events = await peers.client(
            "send", url, "--data", json.dumps(TEXT_HANDOFF), "--token", TOKEN
        )
    assert card["security"] == [{"bearer": []}]
    assert card["securitySchemes"]["bearer"]["type"] == "http"
    assert card["securitySchemes"]["bearer"]["scheme"].lower() == "bearer"
    assert refused == 1
    assert code == 0 and events[0]["event"] == "message"


@pytest.mark.parametrize(
    "how",
    [[], ["--streaming"], ["--streaming", "--to-base-url"]],
    ids=["blocking", "streaming", "streaming-to-base-url"],
)
async def test_a_0_3_client_is_told_why_its_assessment_request_is_rejected(
    how: list[str],
) -> None:
    async with _served(_green) as url:
        code, events = await peers.client("send", url, "--text", '{"participants": {}}', *how)
    assert code == 0, events
    last = events[-1]["body"]
    status = last["status"]
    assert status["state"] == "rejected"
    assert "bad assessment request" in _text(status["message"]["parts"])
    assert "exactly one participant" in _text(status["message"]["parts"])
    if "--streaming" in how:
        assert [e["event"] for e in events] == ["task", "status-update"]
        assert last["final"] is True


@pytest.mark.parametrize("reply", ["task", "message"])
async def test_the_green_agent_plays_a_0_3_purple_agent_in_text_mode(
    reply: str, tmp_path: Path
) -> None:
    log = tmp_path / "received.jsonl"
    async with peers.agent("--reply", reply, "--log", str(log)) as url:
        purple = PurpleAgent(Participant(url=url), await read_card(Participant(url=url)))
        tools = labless_tools()
        agent = green.text_agent(purple, AssessmentConfig(mode="text"))
        view = EpisodeView(
            brief="h1 cannot reach h2.", episode_id="ep-1", mode="text", handle=tools
        )
        report = await agent(view)
    assert purple.protocol == "0.3"
    assert report.status == "done", report.detail
    assert [(s.tool, s.ok) for s in tools.trajectory.steps] == [
        ("topology", True),
        ("submit", True),
    ]
    assert tools.trajectory.submitted == "saw r1, h1"
    handed, answered = [json.loads(line) for line in log.read_text().splitlines()]
    assert [p["kind"] for p in handed["parts"]] == ["text", "data"]
    assert handed["parts"][0]["text"].startswith("h1 cannot reach h2.")
    assert handed["parts"][1]["data"][HANDOFF_KEY]["episode_id"] == "ep-1"
    assert handed["contextId"] == answered["contextId"] == "ep-1"
    devices = answered["parts"][1]["data"]["netdojo_result"]["result"]["devices"]
    assert [d["name"] for d in devices] == ["r1", "h1"]


async def test_a_0_3_purple_agent_that_requires_a_token_is_called_with_it() -> None:
    async with peers.agent("--reply", "message", "--token", TOKEN) as url:
        card = await read_card(Participant(url=url))
        given = Participant.model_validate({"url": url, "token": TOKEN})
        tools = labless_tools()
        agent = green.text_agent(PurpleAgent(given, card), AssessmentConfig(mode="text"))
        report = await agent(EpisodeView(brief="b", episode_id="ep-2", mode="text", handle=tools))
    assert PurpleAgent(given, card).asks_for_credentials()
    assert report.status == "done", report.detail
    assert tools.trajectory.submitted == "saw r1, h1"


def _labless_assessment(episode_s: list[float]) -> Any:
    """`run_assessment` with the lab left out: each scheduled episode runs its agent on tools
    over no lab, and then lasts its ``episode_s`` more."""

    async def run_assessment(
        config: AssessmentConfig,
        participant: str,
        agent_for: Any,
        on_record: Any,
        skip: Collection[int] = (),
    ) -> Assessment:
        records = []
        for slot in schedule(config):
            if slot.index in skip:
                continue
            scenario = generate(slot.family, slot.level, slot.seed)
            tools = labless_tools()
            view = EpisodeView(
                brief=scenario.public.brief,
                episode_id=f"ep-{slot.index}",
                mode="text",
                handle=tools,
            )
            report = await agent_for(slot, scenario)(view)
            await anyio.sleep(episode_s[slot.index])
            outcome = "unsolved" if report.status == "done" else "agent_error"
            done = record(f"ep-{slot.index}", outcome, family=slot.family, level=slot.level)
            done.slot, done.trajectory = slot.index, tools.trajectory
            records.append(done)
            await on_record(slot, done)
        provenance = run("x", []).result.provenance
        return Assessment(
            participant=participant, config=config, provenance=provenance, episodes=records
        )

    return run_assessment


async def test_a_0_3_client_hears_progress_while_episodes_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two episodes against a 0.3 purple agent, the first longer than the 5 s read timeout of
    httpx's defaults, followed by a 0.3 client that streams with that timeout: it never waits
    that long in silence."""
    monkeypatch.setattr(green, "run_assessment", _labless_assessment([6.0, 0.5]))
    config = {"families": ["ospf-adjacency"], "levels": [1], "seeds": [1, 2], "mode": "text"}
    async with peers.agent("--reply", "task") as purple, _served(_green) as url:
        request = json.dumps({"participants": {"agent": purple}, "config": config})
        code, events = await peers.client("send", url, "--text", request, "--streaming")
    assert code == 0, events[-1]  # a read left waiting 5 s would have failed the client
    updates = [e for e in events if e["event"] == "status-update"]
    lines = [_text(e["body"]["status"].get("message", {}).get("parts", [])) for e in updates]
    assert lines[0].startswith("assessing agent at") and lines[0].endswith("(A2A 0.3)")
    episodes = [e for e in updates if "episode" in e["body"].get("metadata", {})]
    assert [e["body"]["metadata"]["episode"]["slot"] for e in episodes] == [0, 1]
    assert any(line.startswith("episode 2/2: ospf-adjacency L1") for line in lines)
    beats = [
        e["body"]["metadata"]["progress"]
        for e in updates
        if "progress" in e["body"].get("metadata", {})
    ]
    # The heartbeat's first wait (2 s) ends before the first episode's 6 s: it beat in them.
    assert beats and all(b["total"] == 2 for b in beats)
    assert beats[0]["running"] == 1 and "elapsed" in lines[1]
    artifacts = [e["body"]["artifact"] for e in events if e["event"] == "artifact-update"]
    assert [a["name"] for a in artifacts] == ["results", "trajectories"]
    results = artifacts[0]["parts"][0]["data"]
    assert [e["outcome"] for e in results["episodes"]] == ["unsolved", "unsolved"]
    assert updates[-1]["body"]["status"]["state"] == "completed" and updates[-1]["body"]["final"]


class SteppedTime:
    """A clock that moves only when the test steps it, and a sleep that hands each wait to the
    test and returns when the test wakes it: what the heartbeat does depends on no scheduling."""

    def __init__(self, now: float) -> None:
        self.now = now
        self._asked, self._asks = anyio.create_memory_object_stream[float]()
        self._wakes, self._woken = anyio.create_memory_object_stream[None]()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        await self._asked.send(seconds)
        await self._woken.receive()

    async def next_wait(self) -> float:
        """The seconds the sleeper asks for next, once it is asleep."""
        return await self._asks.receive()

    async def wake(self, after: float) -> None:
        self.now += after
        await self._wakes.send(None)


async def test_progress_counts_episodes_and_beats_only_in_silence() -> None:
    now = [100.0]
    progress = Progress(3, clock=lambda: now[0])
    progress.episode_started()
    progress.episode_started()
    progress.episode_done()
    now[0] += 65.4
    assert progress.line() == "1 episode running, 1/3 done, 1m05s elapsed"
    assert progress.metadata() == {
        "progress": {"running": 1, "done": 1, "total": 3, "elapsed_s": 65.4}
    }

    stepped = SteppedTime(200.0)
    live = Progress(1, clock=stepped.clock)
    beats: list[float] = []

    async def beat() -> None:
        beats.append(stepped.clock())

    async with anyio.create_task_group() as group:
        group.start_soon(heartbeat, live, beat, 2.0, stepped.sleep)
        assert await stepped.next_wait() == 2.0 and beats == []
        await stepped.wake(after=2.0)
        assert await stepped.next_wait() == 2.0 and beats == [202.0]
        stepped.now += 1.5
        live.sent()  # something else went out: the next beat waits a full period from here
        await stepped.wake(after=0.5)
        assert await stepped.next_wait() == 1.5 and beats == [202.0], "no beat 0.5 s after a send"
        await stepped.wake(after=1.5)
        assert await stepped.next_wait() == 2.0 and beats == [202.0, 205.5]
        await stepped.wake(after=3.0)  # a wake that comes late beats once and waits a full period
        assert await stepped.next_wait() == 2.0 and beats == [202.0, 205.5, 208.5]
        group.cancel_scope.cancel()


async def test_work_done_while_beating_returns_its_result_and_raises_its_own_error() -> None:
    async def beat() -> None:
        pass

    async def answer() -> int:
        await anyio.sleep(0.05)
        return 42

    async def fail() -> int:
        raise RuntimeError("the engine went away")

    assert await beating(Progress(1), beat, answer(), 0.01) == 42
    with pytest.raises(RuntimeError, match="the engine went away"):
        await beating(Progress(1), beat, fail(), 0.01)


async def test_a_0_3_client_is_told_why_an_assessment_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Assessment:
        raise RuntimeError("the engine went away")

    monkeypatch.setattr(green, "run_assessment", broken)
    async with _served(_noop()) as purple, _served(_green) as url:
        request = json.dumps({"participants": {"agent": purple}, "config": {"seeds": [1]}})
        code, events = await peers.client("send", url, "--text", request, "--streaming")
    assert code == 1
    assert "the engine went away" in events[-1]["error"], events[-1]
    assert "TaskGroup" not in events[-1]["error"]
