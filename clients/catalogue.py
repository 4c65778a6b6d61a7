"""The built-in purple agents by name: what each does, and a fresh policy per episode."""

from __future__ import annotations

from collections.abc import Callable

from netdojo.clients.agents import POLICIES, Policy
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


def policy_factory(name: str) -> Callable[[], Policy]:
    """A fresh policy per episode for a built-in purple agent."""
    if name in POLICIES:
        policy = POLICIES[name]
        return lambda: policy
    if name == "heuristic":
        from netdojo.clients.heuristic import troubleshoot

        async def heuristic(session: ToolSession, task: EpisodeView) -> str:
            return await troubleshoot(session, task.brief)

        return lambda: heuristic
    if name == "llm":
        from netdojo.clients.llm import LLMAgent, LLMConfig

        config = LLMConfig.from_env()
        return lambda: LLMAgent(config)
    raise NetdojoError(f"unknown agent {name!r}; built-in agents are: {', '.join(PURPLE_AGENTS)}")
