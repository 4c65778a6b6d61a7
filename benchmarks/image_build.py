"""Agent image build benchmark: how long `netdojo image build` takes, cold and cached.

For the green agent's image and a built-in purple agent's:

cold     a build from scratch (``rebuild``): the wheelhouse made with pip, then the engine's
         build of the install stage and the image (no layer of an earlier build is reused)
cached   the same command once the image exists: the tag is computed and found

The ratio cold/cached is what the cache saves. The device image must be built (`netdojo setup`).
Results go to ``benchmarks/out/image_build-<time>.json``.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from _output import Column, rows_table, save
from netdojo.image_commands import Role, agent_spec
from netdojo.labs.image.agents import build_agent_image

console = Console(width=120)


def measure(role: Role, name: str | None) -> dict[str, Any]:
    spec = agent_spec(role, name)
    cold = build_agent_image(spec, rebuild=True)
    cached = build_agent_image(spec)
    assert cached.action == "cached" and cached.image_id == cold.image_id
    return {
        "image": cold.tag,
        "size_mb": cold.size_mb,
        "wheels": cold.wheels,
        "wheelhouse_s": cold.stages["wheelhouse_s"],
        "docker_build_s": cold.stages["docker_build_s"],
        "cold_s": cold.seconds,
        "cached_s": cached.seconds,
        "ratio": round(cold.seconds / max(cached.seconds, 1e-3), 1),
    }


def seconds(value: float) -> str:
    return f"{value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--purple", default="noop", help="The built-in purple agent's image.")
    args = parser.parse_args()
    rows = [measure(Role.green, None), measure(Role.purple, args.purple)]
    columns = [
        Column("image", "image"),
        Column("MB", "size_mb", lambda v: f"{v:.0f}"),
        Column("wheels", "wheels"),
        Column("wheelhouse s", "wheelhouse_s", seconds),
        Column("docker build s", "docker_build_s", seconds),
        Column("cold s", "cold_s", seconds),
        Column("cached s", "cached_s", lambda v: f"{v:.2f}"),
        Column("cold/cached", "ratio", lambda v: f"{v:.0f}x"),
    ]
    console.print(rows_table("agent image builds", columns, rows))
    console.print(f"saved {save('image_build', {'rows': rows})}")


if __name__ == "__main__":
    main()
