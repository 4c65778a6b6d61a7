"""The built-in purple agents by name: what each does, what each needs from outside, and a
fresh policy per episode."""

from __future__ import annotations

from collections.abc import Callable

from netdojo.clients.agents import POLICIES, Policy, submit_diagnosis
from netdojo.clients.session import ToolSession
from netdojo.errors import NetdojoError
from netdojo.tools.contract import EpisodeView

PURPLE_AGENTS = {
    "heuristic": "a deterministic troubleshooter: reads state, localises faults, fixes them",
    "llm": "a tool-calling loop over an OpenAI-compatible chat-completions endpoint",
    "oracle": "applies the reference solution (judge calibration only)",
    "noop": "does nothing",
    "vandal": "makes random harmful changes",
    "cheater": "fakes symptoms away and reads for leaked answers, to test the judge",
}


def known(name: str) -> str:
    """``name`` if it names a built-in agent; a `NetdojoError` listing them otherwise."""
    if name not in PURPLE_AGENTS:
        raise NetdojoError(
            f"unknown agent {name!r}; built-in agents are: {', '.join(PURPLE_AGENTS)}"
        )
    return name


async def check_ready(name: str) -> str | None:
    """Check once, before any lab is deployed for it, what the built-in agent ``name`` needs
    from outside: for `llm`, its settings and its model endpoint (`preflight`). A line saying
    what answered, or None for an agent that needs nothing; a one-line `NetdojoError` when it
    is not ready."""
    if known(name) != "llm":
        return None
    from netdojo.clients.llm_endpoint import LLMConfig, preflight

    check = await preflight(LLMConfig.from_env())
    listed = "it lists no models" if check.listed is None else f"{len(check.listed)} listed"
    return f"{check.url}: {check.model} answers ({listed}, {check.seconds:.1f} s)"


def policy_factory(name: str) -> Callable[[], Policy]:
    """A fresh policy per episode for a built-in purple agent."""
    if known(name) in POLICIES:
        policy = POLICIES[name]
        return lambda: policy
    if name == "heuristic":
        from netdojo.clients.heuristic import investigate

        async def heuristic(session: ToolSession, task: EpisodeView) -> str:
            summary, diagnosis = await investigate(session, task.brief)
            if diagnosis is not None:
                await submit_diagnosis(session, summary, diagnosis)
            return summary

        return lambda: heuristic
    from netdojo.clients.llm import LLMAgent, LLMConfig  # the one left: llm

    config = LLMConfig.from_env()
    return lambda: LLMAgent(config)
