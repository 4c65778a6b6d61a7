"""``netdojo green``, ``netdojo purple`` and ``netdojo run``: the arena from the command line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from netdojo.console import console, err, reap_leftovers
from netdojo.credentials import AGENT_TOKEN, GREEN_TOKEN, PURPLE_TOKEN, is_loopback, token_from
from netdojo.errors import NetdojoError

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from netdojo.reports.records import AssessmentResult, Rate

DEFAULT_FAMILIES = ("static-routing", "ospf-adjacency", "host-config", "ospf-build")
SERVED_TOKEN = (
    "A file holding the bearer token every A2A call must carry (the agent card stays public); "
    "without it, the token in ${}, if set."
)
GreenTokenFile = Annotated[
    Path | None, typer.Option(dir_okay=False, help=SERVED_TOKEN.format(GREEN_TOKEN))
]
PurpleTokenFile = Annotated[
    Path | None, typer.Option(dir_okay=False, help=SERVED_TOKEN.format(PURPLE_TOKEN))
]
AgentTokenFile = Annotated[
    Path | None,
    typer.Option(
        dir_okay=False,
        help=f"A file holding the bearer token of the purple agent given by URL; without it, the "
        f"token in ${AGENT_TOKEN}, if set.",
    ),
]


def _warn_if_open(host: str, token: str | None, what: str, anyone_can: str, variable: str) -> None:
    if token is None and not is_loopback(host):
        err.print(
            f"[bold yellow]warning:[/] the {what} listens on {host} without authentication: "
            f"anyone who reaches it can {anyone_can}. Require a token with --token-file or "
            f"${variable}."
        )


def green(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 9009,
    card_url: Annotated[
        str | None,
        typer.Option(help="Public base URL for the agent card and the MCP endpoints it hands out."),
    ] = None,
    token_file: GreenTokenFile = None,
) -> None:
    """Serve the green agent (A2A): it runs assessments against purple agents.

    It needs what labs need (`netdojo setup`). In a container, labs run on the host's engine
    through its mounted socket; until they can, it serves anyway and answers each assessment
    request with what is missing.
    """
    import anyio

    from netdojo.labs.container import own_container
    from netdojo.labs.provision import require
    from netdojo.servers.apps import green_app
    from netdojo.servers.serving import serve_uvicorn, until_signal

    token = token_from(token_file, GREEN_TOKEN)
    preflight = None
    try:
        require()
    except NetdojoError as exc:
        if own_container() is None:
            raise
        preflight = require
        err.print(
            f"[bold yellow]warning:[/] labs cannot run in this container: {escape(str(exc))}; "
            "assessment requests are answered with this until they can",
            soft_wrap=True,
        )
    _warn_if_open(
        host,
        token,
        "green agent",
        "start assessments on this machine, read every task and make it fetch any URL",
        GREEN_TOKEN,
    )

    async def serve() -> None:
        app = green_app(host, port, card_url, token, preflight=preflight)
        async with serve_uvicorn(app, host, port):
            err.print(f"green agent: {card_url or f'http://{host}:{port}'}")
            await until_signal()

    anyio.run(serve)


def purple(
    name: Annotated[str, typer.Argument(help="heuristic, llm, oracle, noop, vandal or cheater.")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 9010,
    card_url: Annotated[str | None, typer.Option(help="Public base URL for the card.")] = None,
    token_file: PurpleTokenFile = None,
) -> None:
    """Serve a built-in purple agent (A2A); `llm` checks its model endpoint first."""
    import anyio

    from netdojo.servers.serving import serve_uvicorn, until_signal

    token = token_from(token_file, PURPLE_TOKEN)
    _check_ready(name)
    app = _purple_app(name, card_url or f"http://{host}:{port}", token)
    _warn_if_open(host, token, f"purple agent {name}", "hand it work", PURPLE_TOKEN)

    async def serve() -> None:
        async with serve_uvicorn(app, host, port):
            err.print(f"purple agent {name}: {card_url or f'http://{host}:{port}'}")
            await until_signal()

    anyio.run(serve)


def run(
    agent: Annotated[
        str | None, typer.Option(help="A built-in agent name or a purple agent's URL.")
    ] = None,
    families: Annotated[str, typer.Option(help="Comma-separated families.")] = ",".join(
        DEFAULT_FAMILIES
    ),
    levels: Annotated[str, typer.Option(help="Comma-separated levels.")] = "1",
    episodes: Annotated[int | None, typer.Option(help="Episodes drawn from --seed.")] = None,
    seeds: Annotated[str | None, typer.Option(help="Instance seeds for every pair.")] = None,
    trials: Annotated[int, typer.Option(help="Trials per instance.")] = 1,
    seed: Annotated[
        int | None, typer.Option(help="The assessment seed (default: drawn at random, recorded).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Episodes at once.")] = 1,
    mode: Annotated[str, typer.Option(help="mcp or text.")] = "mcp",
    max_tool_calls: Annotated[int, typer.Option(help="Tool calls per episode.")] = 60,
    time_budget: Annotated[float, typer.Option(help="Seconds per episode.")] = 600.0,
    calibration: Annotated[
        bool, typer.Option(help="A calibration run (admits the oracle).")
    ] = False,
    task: Annotated[
        str,
        typer.Option(
            help="repair, or diagnose: read-only tools, judged on the submitted diagnosis alone."
        ),
    ] = "repair",
    shard: Annotated[
        str | None,
        typer.Option(
            metavar="I/N",
            help="Run shard I of N (0-based, e.g. 0/2): every N-th episode of the schedule; needs "
            "--seed or --seeds. Shards run apart are joined with `netdojo merge`.",
        ),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where results go.")] = Path("results"),
    resume: Annotated[
        Path | None,
        typer.Option(
            file_okay=False,
            help="Finish the run in this folder with its agent and config: only the episodes "
            "it has not recorded run.",
        ),
    ] = None,
    agent_token_file: AgentTokenFile = None,
) -> None:
    """Run an assessment locally: green and purple agents on loopback, over real A2A.

    Each episode is kept in the output folder as it ends; a run that was stopped is finished
    with --resume. With --shard I/N only every N-th episode of the schedule runs, so that
    machines share an assessment; `netdojo merge` joins their folders into one run. The green
    agent (and a built-in purple agent) require a token made for the run; a purple agent given
    by URL gets the token in --agent-token-file or $NETDOJO_AGENT_TOKEN.
    `--agent llm` checks its model endpoint ($NETDOJO_LLM_*) before any lab is deployed. The
    exit status is 1 when every episode ended as the agent's error.
    """
    import anyio

    from netdojo.judges.journal import keeper, merge, open_run
    from netdojo.labs.provision import require
    from netdojo.reports.records import AssessmentResult
    from netdojo.reports.summary import failed_for_the_agent, summarized
    from netdojo.scenario_commands import parse_seeds
    from netdojo.scenarios import registry

    chosen = [f.strip() for f in families.split(",") if f.strip()]
    if task == "diagnose" and tuple(chosen) == DEFAULT_FAMILIES:
        chosen = [f for f in chosen if registry.family(f).kind == "reactive"]
    config: dict[str, Any] = {
        "families": chosen,
        "levels": [int(v) for v in levels.split(",") if v.strip()],
        "trials": trials,
        "seed": seed,
        "concurrency": concurrency,
        "mode": mode,
        "max_tool_calls": max_tool_calls,
        "time_budget_s": time_budget,
        "calibration": calibration,
        "task": task,
    }
    if episodes is not None:
        config["episodes"] = episodes
    if seeds is not None:
        config["seeds"] = parse_seeds(seeds)
    if shard is not None:
        config["shard_index"], config["num_shards"] = parse_shard(shard)
    journal, spec, earlier = open_run(agent, config, out, resume)
    by_url = spec.agent.startswith(("http://", "https://"))
    if agent_token_file is not None and not by_url:
        raise NetdojoError("--agent-token-file is for a purple agent given by URL")
    agent_token = token_from(agent_token_file, AGENT_TOKEN) if by_url else None
    if not by_url:
        _check_ready(spec.agent)
    require()
    reap_leftovers()
    if resume is None:
        journal.start(spec)
    elif earlier:
        err.print(f"resuming {journal.folder}: {len(earlier)} episodes recorded")
    shown = spec.config
    part = f", shard {shown.shard_index} of {shown.num_shards}" if shown.num_shards > 1 else ""
    err.print(f"[dim]assessment seed {shown.seed}{part}[/]")
    skip = sorted({r.slot for r in earlier if r.slot is not None})
    request_config = spec.config.model_dump(mode="json", exclude_none=True)
    results = anyio.run(_run, spec.agent, request_config, skip, keeper(journal), agent_token)
    merged = summarized(merge(AssessmentResult.model_validate(results["results"]), earlier))
    results["results"] = merged.model_dump(mode="json")
    _write(results, journal.folder)
    cause = failed_for_the_agent(merged.episodes)
    if cause is not None:
        err.print(
            f"[bold red]every episode failed for the agent:[/] {escape(cause)}", soft_wrap=True
        )
        raise typer.Exit(1)


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` as (shard_index, num_shards); the config checks their ranges."""
    index, slash, count = text.partition("/")
    if not slash or not index.strip().isdigit() or not count.strip().isdigit():
        raise NetdojoError(
            f"--shard takes I/N, the shard's index and the number of shards (e.g. 0/2), "
            f"got {text!r}"
        )
    return int(index), int(count)


def _check_ready(name: str) -> None:
    """A built-in agent's outside needs, checked before any lab is deployed for it."""
    import anyio

    from netdojo.clients.catalogue import check_ready

    answered = anyio.run(check_ready, name)
    if answered:
        err.print(f"[dim]{escape(answered)}[/]")


async def _run(
    agent: str,
    config: dict[str, Any],
    skip: list[int] | None = None,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    agent_token: str | None = None,
) -> dict[str, Any]:
    """The assessment over loopback A2A, the green agent (and a built-in purple agent) each
    requiring a token of their own; ``agent_token`` is for a purple agent given by URL."""
    from contextlib import AsyncExitStack

    from netdojo.clients.assessor import assess
    from netdojo.credentials import fresh_token
    from netdojo.servers.apps import green_app
    from netdojo.servers.serving import free_port, serve_uvicorn

    async with AsyncExitStack() as stack:
        participant: dict[str, Any] = {"url": agent, "token": agent_token}
        if not agent.startswith(("http://", "https://")):
            port = free_port()
            participant = {"url": f"http://127.0.0.1:{port}", "token": fresh_token()}
            app = _purple_app(agent, participant["url"], participant["token"])
            await stack.enter_async_context(serve_uvicorn(app, "127.0.0.1", port))
        green_port, green_token = free_port(), fresh_token()
        green_url = f"http://127.0.0.1:{green_port}"
        app = green_app("127.0.0.1", green_port, token=green_token)
        await stack.enter_async_context(serve_uvicorn(app, "127.0.0.1", green_port))
        request: dict[str, Any] = {"participants": {"agent": participant}, "config": config}
        if skip:
            request["skip"] = skip
        table = _episodes_table()

        def shown(update: dict[str, Any]) -> None:
            _add_row(table, update["episode"])
            if on_episode is not None:
                on_episode(update)

        with Live(table, console=console):
            artifacts = await assess(green_url, request, on_episode=shown, token=green_token)
    return artifacts


def _purple_app(name: str, base_url: str, token: str | None) -> Starlette:
    """A built-in purple agent over A2A: its policy from the catalogue, served by the servers."""
    from netdojo.clients.catalogue import PURPLE_AGENTS, policy_factory
    from netdojo.clients.purple import CallerContextBuilder, PurpleExecutor
    from netdojo.servers.apps import purple_app

    executor = PurpleExecutor(policy_factory(name))
    builder = CallerContextBuilder()
    return purple_app(name, PURPLE_AGENTS[name], executor, base_url, token, builder)


def _episodes_table() -> Table:
    return Table("episode", "family", "level", "seed", "outcome", "agent s", title="assessment")


def _add_row(table: Table, episode: dict[str, Any]) -> None:
    timings = episode.get("timings") or {}
    table.add_row(
        str(episode.get("episode_id", "")),
        str(episode.get("family", "")),
        str(int(episode.get("level", 0))),
        str(int(episode.get("seed", 0))),
        str(episode.get("outcome", "")),
        f"{float(timings.get('agent_s', 0)):.1f}",
    )


def _write(artifacts: dict[str, Any], out: Path) -> None:
    from netdojo.judges.journal import write_results
    from netdojo.reports.outputs import write_run_reports
    from netdojo.reports.records import AssessmentResult

    result = AssessmentResult.model_validate(artifacts["results"])
    listed = (artifacts.get("trajectories") or {}).get("trajectories", [])
    folder = write_results(out, result, listed)
    reports = write_run_reports(out)
    table = Table("measure", "value", "95% CI", "n", title=f"netdojo: {result.participant}")
    for name, rate in _rates(result):
        table.add_row(
            name, f"{rate.value:.0%}", f"{rate.ci_low:.0%}-{rate.ci_high:.0%}", str(rate.n)
        )
    console.print(table)
    console.print(f"outcomes: {result.summary.outcomes}")
    console.print(f"results: {out / 'results.json'}, {', '.join(map(str, reports))}, {folder}/")


def _rates(result: AssessmentResult) -> list[tuple[str, Rate]]:
    summary = result.summary
    rates = [("solved", summary.solved), ("safe", summary.safe), ("correct", summary.correct)]
    return rates + [(f"solved: {family}", rate) for family, rate in summary.by_family.items()]
