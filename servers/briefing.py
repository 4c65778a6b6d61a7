"""The text a model is handed to open an episode, for the adapters whose frameworks start a
conversation from a prompt (inspect-ai, verifiers): the public brief, with every constraint
the brief does not already state."""

from __future__ import annotations

from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import PublicHalf


def briefing(public: PublicHalf) -> str:
    """The brief and the constraints it leaves unstated, of the public half alone."""
    unstated = [line for line in public.constraints if line not in public.brief]
    text = public.brief
    if unstated:
        text += "\n\nConstraints:\n" + "\n".join(f"- {line}" for line in unstated)
    return text


def instance_briefing(family: str, level: int, seed: int) -> str:
    """The briefing of one instance, generated from its family, level and seed."""
    return briefing(generate(family, level, seed).public)
