"""The shards of one assessment, run apart, joined into one run.

A config with ``num_shards`` above 1 runs only the schedule slots whose index modulo
``num_shards`` is its ``shard_index``. Runs merge only when they are every shard of one
assessment: one agent, one netdojo version, one config but for the shard keys, each shard once,
every slot of the schedule recorded exactly once, and every instance generated alike. The merged
run is the run of the whole schedule (its config names no shard): episodes in schedule order, the
summary recomputed over all of them, the first shard's provenance with every instance, and each
shard's own provenance kept beside it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from netdojo.errors import NetdojoError
from netdojo.reports.records import (
    SCHEMA_VERSION,
    SHARD_KEYS,
    AssessmentResult,
    ConfigRecord,
    EpisodeRecord,
    Instance,
)
from netdojo.reports.runs import EPISODES, RESULTS, Run
from netdojo.reports.summary import summarize


class MergeError(NetdojoError):
    """Runs that are not the complete shards of one assessment."""


def merge_runs(runs: Sequence[Run], out: Path) -> Run:
    """The run of the whole schedule that ``runs``, its shards, make together, to be written
    to ``out``; refused with the reason unless they are every shard of one assessment."""
    if not runs:
        raise MergeError("give the folder of every shard to merge")
    _check_out(out, runs)
    _one_agent(runs)
    _one_version(runs)
    config = _one_config(runs)
    shards = _every_shard(runs)
    episodes = _every_slot(shards, config)
    _unique_ids(shards)
    first = shards[0].result
    provenance = first.provenance.model_copy(
        update={
            "instances": _instances(shards, episodes),
            "shards": [run.result.provenance for run in shards],
        }
    )
    result = AssessmentResult(
        schema_version=SCHEMA_VERSION,
        participant=_participant(shards),
        config=config,
        provenance=provenance,
        episodes=episodes,
        summary=summarize(episodes),
    )
    trajectories = {k: v for run in shards for k, v in run.trajectories.items()}
    return Run(path=out, result=result, trajectories=trajectories)


def _check_out(out: Path, runs: Sequence[Run]) -> None:
    if any(out.resolve() == run.path.resolve() for run in runs):
        raise MergeError(f"--out {out} is one of the shards: write the merged run elsewhere")
    held = [name for name in (RESULTS, EPISODES) if (out / name).exists()]
    if held:
        raise MergeError(f"{out} already holds a run ({', '.join(held)}): choose another --out")


def _one_agent(runs: Sequence[Run]) -> None:
    if len({run.agent for run in runs}) > 1:
        given = ", ".join(f"{run.agent} in {run.path}" for run in runs)
        raise MergeError(f"the runs assessed different agents: {given}")


def _one_version(runs: Sequence[Run]) -> None:
    if len({run.result.provenance.netdojo for run in runs}) > 1:
        given = ", ".join(f"{run.result.provenance.netdojo} in {run.path}" for run in runs)
        raise MergeError(
            f"the runs ran different netdojo versions ({given}): their verdicts are not one "
            "assessment's"
        )


def _one_config(runs: Sequence[Run]) -> ConfigRecord:
    """The config every run shares, as the whole schedule's (no shard named). With explicit
    instance seeds the assessment seed plays no part in the schedule and may differ."""
    first = runs[0].result.config
    ways = {run.result.config.num_shards for run in runs}
    if len(ways) > 1:
        split = ", ".join(
            f"num_shards {run.result.config.num_shards} in {run.path}" for run in runs
        )
        raise MergeError(f"the runs split the schedule different ways: {split}")
    ignored = {*SHARD_KEYS, *(("seed",) if first.seeds is not None else ())}
    ours = first.model_dump(exclude=ignored)
    for run in runs[1:]:
        theirs = run.result.config.model_dump(exclude=ignored)
        differ = [
            f"{key} {ours[key]!r} vs {theirs[key]!r}" for key in ours if ours[key] != theirs[key]
        ]
        if differ:
            raise MergeError(
                f"{run.path} ran another config than {runs[0].path} ({'; '.join(differ)}): "
                "shards of one assessment differ only in shard_index"
            )
    return first.model_copy(update={"shard_index": 0, "num_shards": 1})


def _every_shard(runs: Sequence[Run]) -> list[Run]:
    """The runs in shard order, each shard exactly once."""
    count = runs[0].result.config.num_shards
    by_index: dict[int, list[Run]] = defaultdict(list)
    for run in runs:
        by_index[run.result.config.shard_index].append(run)
    for index, given in sorted(by_index.items()):
        if len(given) > 1:
            folders = ", ".join(str(run.path) for run in given)
            raise MergeError(f"shard {index} of {count} is given twice: {folders}")
    missing = [index for index in range(count) if index not in by_index]
    if missing:
        raise MergeError(
            f"shards {missing} of {count} are missing: give the folder of every shard, "
            f"0 to {count - 1}"
        )
    return [by_index[index][0] for index in range(count)]


def _every_slot(shards: Sequence[Run], config: ConfigRecord) -> list[EpisodeRecord]:
    """Every slot of the schedule once, in order, each from the shard that runs it."""
    total = config.slot_count
    placed: dict[int, tuple[EpisodeRecord, Run]] = {}
    for run in shards:
        shard = run.result.config
        for record in run.result.episodes:
            slot = record.slot
            if slot is None:
                raise MergeError(
                    f"{run.path}: episode {record.episode_id} names no schedule slot, so it "
                    "cannot be placed"
                )
            if not 0 <= slot < total:
                raise MergeError(f"{run.path}: slot {slot} is outside the schedule of {total}")
            if not shard.in_shard(slot):
                raise MergeError(
                    f"{run.path}: slot {slot} is not shard {shard.shard_index}'s but shard "
                    f"{slot % shard.num_shards}'s"
                )
            if slot in placed:
                raise MergeError(f"slot {slot} is recorded twice in {run.path}")
            placed[slot] = (record, run)
    missing: dict[Path, list[int]] = defaultdict(list)
    for slot in range(total):
        if slot not in placed:
            missing[shards[slot % len(shards)].path].append(slot)
    if missing:
        lacking = "; ".join(f"{path} lacks slots {slots}" for path, slots in missing.items())
        raise MergeError(
            f"{lacking}: finish a shard with `netdojo run --resume DIR`, then merge again"
        )
    return [placed[slot][0] for slot in range(total)]


def _unique_ids(shards: Sequence[Run]) -> None:
    seen: dict[str, Path] = {}
    for run in shards:
        for record in run.result.episodes:
            earlier = seen.setdefault(record.episode_id, run.path)
            if earlier != run.path:
                raise MergeError(
                    f"episode id {record.episode_id} is in {earlier} and {run.path}: the runs "
                    "share episodes, so they are not shards run apart"
                )


def _instances(shards: Sequence[Run], episodes: Sequence[EpisodeRecord]) -> list[Instance]:
    """Every instance once, in schedule order; one generated differently by two shards is
    refused (their netdojo differed, whatever its version said)."""
    seen: dict[str, tuple[Instance, Path]] = {}
    for run in shards:
        for instance in run.result.provenance.instances:
            known, where = seen.setdefault(instance.scenario_id, (instance, run.path))
            if known.digest != instance.digest:
                raise MergeError(
                    f"instance {instance.scenario_id} was generated differently in {where} "
                    f"(digest {known.digest}) and {run.path} (digest {instance.digest})"
                )
    order = dict.fromkeys(record.scenario_id for record in episodes)
    return [seen[scenario][0] for scenario in order if scenario in seen]


def _participant(shards: Sequence[Run]) -> str:
    """The shards' participant; only its name when each shard reached it at its own URL."""
    given = {run.result.participant for run in shards}
    return given.pop() if len(given) == 1 else shards[0].agent
