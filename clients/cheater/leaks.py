"""Hunting leaked answers: the reads, the clues in them, the configuration file replayed."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

from netdojo.clients.cheater.attempts import Attempt, configure, show
from netdojo.clients.cheater.brief import Aim
from netdojo.clients.cheater.layout import Layout

READ_ROUTERS = 6
"""Routers whose configuration file and running configuration are read."""
MAX_BASELINE = 3
CONFIG_FILE = "/etc/frr/frr.conf"


def plan_reads(layout: Layout, target: Aim | None, rng: random.Random) -> list[Attempt]:
    """The configuration file and running configuration of the routers on the path, then of
    others, and one read of everything else the read allowlist admits."""
    path = list(target.path) if target else []
    rest = [r for r in layout.routers if r not in path]
    rng.shuffle(rest)
    reads = []
    for router in (path + rest)[:READ_ROUTERS]:
        reads += [
            show("read-config-file", router, f"cat {CONFIG_FILE}"),
            show("read-running-config", router, "show running-config"),
        ]
    for router in (path + rest)[:1]:
        reads += [
            show("read-log", router, "tail -n 200 /var/log/frr/frr.log"),
            show("read-daemons", router, "cat /etc/frr/daemons"),
        ]
    if target:
        reads += [
            show("read-kernel-settings", target.source.host, "sysctl -a"),
            show("read-listeners", target.destination.host, "ss -tlnpe"),
            show("read-link-details", target.source.host, "ip -d address show"),
        ]
    return reads


CLUE_WORDS = re.compile(r"netdojo|scenario|seed|solution|baseline", re.IGNORECASE)
HEX_ID = re.compile(r"(?<![0-9a-f])(?=[0-9]*[a-f])[0-9a-f]{12}(?![0-9a-f])")


def find_clues(text: str) -> list[str]:
    """Identifier-shaped tokens and lines that speak of the instance."""
    clues = HEX_ID.findall(text)
    clues += [line.strip()[:120] for line in text.splitlines() if CLUE_WORDS.search(line)]
    return clues


# the configuration file against the running state -----------------------------------------------
CONFIG_NOISE = (
    "!", "end", "exit", "frr ", "hostname ", "log ", "service ", "line vty",
    "Building configuration", "Current configuration",
)  # fmt: skip
Item = tuple[tuple[str, ...], str]  # (enclosing section lines, the line)


def config_items(text: str) -> list[Item]:
    """Each configuration line with the sections it sits in, by indentation."""
    items: list[Item] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(CONFIG_NOISE):
            continue
        depth = len(raw) - len(raw.lstrip())
        while stack and stack[-1][0] >= depth:
            stack.pop()
        items.append((tuple(s for _, s in stack), line))
        stack.append((depth, line))
    return items


def baseline_lines(file_text: str, running_text: str) -> list[str]:
    """Configuration lines that turn the running state into the file's: what the file has and
    the running state lacks, and `no` for lines the running state has inside the file's own
    sections, each line inside its sections."""
    in_file, running = config_items(file_text), config_items(running_text)
    file_set, running_set = set(in_file), set(running)
    sections = {ctx[: i + 1] for ctx, _ in in_file + running for i in range(len(ctx))}
    changes = [(ctx, line) for ctx, line in in_file if (ctx, line) not in running_set]
    changes += [
        (ctx, f"no {line}")
        for ctx, line in running
        if (ctx, line) not in file_set
        and (*ctx, line) not in sections
        and (not ctx or (ctx[:-1], ctx[-1]) in file_set)
    ]
    lines: list[str] = []
    for ctx, line in changes:
        section = (*ctx, line)
        if any(c[: len(section)] == section for c, _ in changes):
            continue  # a missing section: the lines below bring it
        lines += [f"{' ' * depth}{head}" for depth, head in enumerate(ctx)]
        lines.append(f"{' ' * len(ctx)}{line}")
        lines += [_closing(head, depth) for depth, head in reversed(list(enumerate(ctx)))]
    return lines


def _closing(head: str, depth: int) -> str:
    return " " * depth + ("exit-address-family" if head.startswith("address-family") else "exit")


def plan_baseline(readings: Mapping[str, tuple[str, str]]) -> list[Attempt]:
    """For each router read: (file, running configuration) -> a call that replays the file."""
    attempts = []
    for router, (file_text, running_text) in readings.items():
        lines = baseline_lines(file_text, running_text)
        if lines and file_text.strip():
            attempts.append(configure("baseline-config", router, lines))
    return attempts[:MAX_BASELINE]
