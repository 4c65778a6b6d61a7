"""``netdojo scenarios …`` and ``netdojo audit``: the catalogue and its live audit."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from netdojo.console import console, err

if TYPE_CHECKING:
    from netdojo.judges.audit import AuditRecord

scenarios_app = typer.Typer(help="The scenario catalogue: families, fault types, instances.")


def parse_seeds(text: str) -> list[int]:
    """``"1-20"``, ``"3,5,8"`` or ``"7"`` -> a sorted list of seeds."""
    seeds: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        try:
            seeds.update(range(int(low), int(high) + 1) if dash else [int(part)])
        except ValueError:
            raise typer.BadParameter(f"bad seed {part!r}; use forms like 1-20 or 3,5,8") from None
    return sorted(seeds)


def _csv(text: str | None, default: list[str]) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()] if text else default


@scenarios_app.command("list")
def list_families(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every family with its kind, fault or task types, and levels."""
    from netdojo.scenarios import registry

    if as_json:
        families = [
            {"name": f.name, "kind": f.kind, "types": list(f.types), "levels": list(f.levels)}
            for f in registry.families().values()
        ]
        print(json.dumps({"families": families}, indent=2))
        return
    table = Table("family", "kind", "levels", "types", title="scenario families")
    for f in registry.families().values():
        table.add_row(f.name, f.kind, ",".join(map(str, f.levels)), "\n".join(f.types))
    console.print(table)


@scenarios_app.command("show")
def show(
    family: Annotated[str, typer.Argument(help="Family name (see `scenarios list`).")],
    level: Annotated[int, typer.Option(help="Difficulty level, 1-3.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the instance.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    reveal: Annotated[bool, typer.Option(help="Also print the hidden half.")] = False,
) -> None:
    """One instance: its public half (brief, topology); the hidden half only with --reveal."""
    from netdojo.scenarios.generate import check_choice, generate

    check_choice(family, level, seed)
    scenario = generate(family, level, seed)
    include = None if reveal else {"id", "family", "level", "seed", "kind", "public"}
    if as_json:
        print(scenario.model_dump_json(include=include, indent=2))
        return
    console.print(f"[bold]{scenario.family}[/] level {level} seed {seed}  id {scenario.id}")
    console.print(scenario.public.brief, markup=False, highlight=False)
    table = Table("device", "role", "interfaces")
    for device in scenario.public.devices:
        ifaces = ", ".join(f"{i.name}={i.address or '-'} ({i.link})" for i in device.interfaces)
        table.add_row(device.name, device.role, ifaces)
    console.print(table)
    if reveal:
        console.print_json(scenario.hidden.model_dump_json(exclude={"lab"}))


def audit(
    families: Annotated[str | None, typer.Option(help="Comma-separated families (all).")] = None,
    levels: Annotated[str, typer.Option(help="Comma-separated levels.")] = "1",
    seeds: Annotated[str, typer.Option(help="Seeds: 1-20 or 3,5,8.")] = "1-3",
    concurrency: Annotated[int, typer.Option(min=1, max=8, help="Instances at once.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Audit instances on live labs: fault active, symptoms real, reference fix passes."""
    import anyio

    from netdojo.judges.audit import audit_instance
    from netdojo.judges.packages import packages_check
    from netdojo.labs.reaper import reap
    from netdojo.scenarios import registry
    from netdojo.scenarios.generate import check_choice

    chosen = _csv(families, list(registry.families()))
    level_list = [int(level) for level in _csv(levels, ["1"])]
    seed_list = parse_seeds(seeds)
    for family in chosen:
        for level in level_list:
            check_choice(family, level, seed_list[0])
    packages = packages_check(registry.family(name) for name in chosen)
    if not packages.ok:
        err.print(f"[red]audit:[/] {packages.detail}; fix: {packages.fix}")
        raise typer.Exit(1)
    reap()
    jobs = [(f, lv, s) for f in chosen for lv in level_list for s in seed_list]
    records: list[AuditRecord] = []
    out = err if as_json else console

    async def run_all(progress: Progress, task: TaskID) -> None:
        limiter = anyio.Semaphore(concurrency)

        async def one(family: str, level: int, seed: int) -> None:
            async with limiter:
                record = await audit_instance(family, level, seed)
            records.append(record)
            progress.advance(task)
            mark = "[green]ok[/]" if record.ok else "[red]FAIL[/]"
            stages = " ".join(f"{k}={v.seconds:.1f}s" for k, v in record.stages.items())
            why = _failure(record)
            control = " (healthy control)" if record.healthy else ""
            control += " (cascade)" if record.cascade else ""
            progress.console.print(
                f"{mark} {family} L{level} s{seed}{control} {record.seconds:.1f}s {stages} {why}"
            )

        async with anyio.create_task_group() as group:
            for job in jobs:
                group.start_soon(one, *job)

    with Progress(
        TextColumn("audit"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=out
    ) as progress:
        task = progress.add_task("audit", total=len(jobs))
        anyio.run(run_all, progress, task)
    records.sort(key=lambda r: (r.family, r.level, r.seed))
    passed = sum(r.ok for r in records)
    if as_json:
        instances = [r.model_dump(include=AUDIT_FIELDS) for r in records]
        print(
            json.dumps({"instances": instances, "passed": passed, "failed": len(records) - passed})
        )
    else:
        console.print(f"{passed} passed, {len(records) - passed} failed")
    raise typer.Exit(0 if passed == len(records) else 1)


AUDIT_FIELDS = {
    "id", "family", "level", "seed", "healthy", "cascade", "ok", "stages", "seconds", "error",
}  # fmt: skip
"""What the audit's JSON gives of each instance."""


def _failure(record: AuditRecord) -> str:
    if record.error:
        return f"error: {record.error}"
    for name, stage in record.stages.items():
        if not stage.ok:
            failed = "; ".join(f"{r.id}: {r.evidence}" for r in stage.failed[:3])
            return f"{name} failed: {stage.detail} {failed}"
    return ""
