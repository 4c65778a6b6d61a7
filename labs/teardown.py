"""Tear a lab down by name, in this process or in one of its own:
``python -m netdojo.labs.teardown NAME`` is how a process about to exit hands its lab over."""

from __future__ import annotations

import sys

from netdojo.errors import NetdojoError
from netdojo.labs.errors import LabError
from netdojo.labs.reaper import LabInfo, netdojo_labs, remove_lab


def tear_down(name: str) -> list[LabInfo]:
    """Remove every netdojo lab named ``name``; `LabError`, naming the labs there are, if none."""
    matches = [info for info in netdojo_labs() if info.name == name]
    if not matches:
        known = ", ".join(info.name for info in netdojo_labs()) or "none"
        raise LabError(f"no lab named {name!r}; labs: {known}")
    for info in matches:
        remove_lab(info)
    return matches


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m netdojo.labs.teardown NAME", file=sys.stderr)
        return 2
    try:
        tear_down(args[0])
    except NetdojoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
