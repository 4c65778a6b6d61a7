"""LLM smoke run: a few episodes of the built-in `llm` agent against any model endpoint.

For a person trying a real model: the endpoint is checked once (it lists the model where it
lists models, and answers one short completion) before any lab is deployed, then each episode
runs in process as ``netdojo run --agent llm`` runs it, and one line per episode shows the
outcome, the model's turns, tokens in and out, calls rejected as unknown or invalid, and the
seconds the agent took. Settings not given on the command line come from ``NETDOJO_LLM_*``.

    python benchmarks/llm_smoke.py --base-url http://127.0.0.1:8000/v1 --model qwen2.5 -n 3

Results go to ``benchmarks/out/llm_smoke-<time>.json``. It deploys labs: not run in CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import anyio
from rich.console import Console

from _output import Column, rows_table, save
from netdojo.clients.inprocess import in_process
from netdojo.clients.llm import LLMAgent
from netdojo.clients.llm_endpoint import LLMConfig, preflight
from netdojo.errors import NetdojoError
from netdojo.judges.assessment import AssessmentConfig, Slot, run_assessment
from netdojo.judges.runner import EpisodeRecord
from netdojo.labs.provision import require
from netdojo.scenarios.model import Scenario
from netdojo.servers.mcp_server import episode_server

console = Console(width=140)


def llm_config(args: argparse.Namespace) -> LLMConfig:
    given = {
        "base_url": args.base_url,
        "model": args.model,
        "api_key": args.api_key,
        "max_tokens": args.max_tokens,
        "request_timeout_s": args.timeout,
        "max_turns": args.max_turns,
    }
    return LLMConfig.from_env(**{k: v for k, v in given.items() if v is not None})


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    config = llm_config(args)
    check = await preflight(config)
    listed = "not listed" if check.listed is None else f"{len(check.listed)} listed"
    console.print(f"{check.url}: {check.model} answers ({listed}, {check.seconds:.1f} s)")
    require()
    agents: dict[int, LLMAgent] = {}
    started: dict[int, float] = {}
    rows: list[dict[str, Any]] = []

    def agent_for(slot: Slot, scenario: Scenario) -> Any:
        agents[slot.index] = LLMAgent(config)
        started[slot.index] = time.monotonic()
        return in_process(agents[slot.index], episode_server)

    async def on_record(slot: Slot, record: EpisodeRecord) -> None:
        row = episode_row(slot, record, agents[slot.index], time.monotonic() - started[slot.index])
        rows.append(row)
        console.print(
            f"{row['family']} L{row['level']} seed {row['seed']}: {row['outcome']}, "
            f"{row['turns']} turns, {row['tokens_in']}/{row['tokens_out']} tokens, "
            f"{row['agent_s']:.0f} s"
        )

    assessment = AssessmentConfig(
        families=args.families.split(","),
        levels=[args.level],
        episodes=args.episodes,
        seed=args.seed,
        mode="mcp",
        max_tool_calls=args.max_tool_calls,
        time_budget_s=args.time_budget,
    )
    await run_assessment(assessment, f"llm:{config.model}", agent_for, on_record)
    return rows


def episode_row(
    slot: Slot, record: EpisodeRecord, agent: LLMAgent, seconds: float
) -> dict[str, Any]:
    model = agent.record
    return {
        "family": slot.family,
        "level": slot.level,
        "seed": slot.seed,
        "outcome": record.outcome,
        "turns": model.usage.turns,
        "tokens_in": model.usage.prompt_tokens,
        "tokens_out": model.usage.completion_tokens,
        "rejected": len(model.rejected),
        "text_calls": sum(1 for t in model.turns if t.form not in (None, "native")),
        "agent_s": round(record.timings.agent_s, 1),
        "episode_s": round(seconds, 1),
        "error": model.error or record.error,
    }


COLUMNS = (
    Column("family", "family"),
    Column("level", "level"),
    Column("seed", "seed"),
    Column("outcome", "outcome"),
    Column("turns", "turns"),
    Column("tokens in", "tokens_in"),
    Column("tokens out", "tokens_out"),
    Column("rejected", "rejected"),
    Column("text-form turns", "text_calls"),
    Column("agent s", "agent_s", "{:.1f}".format),
    Column("episode s", "episode_s", "{:.1f}".format),
)


def report(rows: list[dict[str, Any]]) -> None:
    ordered = sorted(rows, key=lambda r: (r["family"], r["seed"]))
    console.print(rows_table("llm agent, one row per episode", COLUMNS, ordered))
    for row in rows:
        if row["error"]:
            console.print(f"[red]{row['family']} seed {row['seed']}: {row['error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="the endpoint, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--model", help="the served model's name")
    parser.add_argument("--api-key")
    parser.add_argument("-n", "--episodes", type=int, default=3)
    parser.add_argument("--families", default="static-routing,host-config")
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1, help="the assessment seed")
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--timeout", type=float, help="seconds per model request")
    parser.add_argument("--max-turns", type=int)
    parser.add_argument("--max-tool-calls", type=int, default=60)
    parser.add_argument("--time-budget", type=float, default=600.0, help="seconds per episode")
    args = parser.parse_args()
    try:
        rows = anyio.run(run, args)
    except NetdojoError as exc:
        console.print(f"[red]{exc}")
        sys.exit(1)
    report(rows)
    path = save("llm_smoke", rows)
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
