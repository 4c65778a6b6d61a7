"""No lab is ever lost to another: a clashing `lab up` is refused before it touches anything, a
deploy that clashes anyway (two at once) and a deploy stopped half-way remove only what they
created, and a lab named after its folder gets a name of its own."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from netdojo.labs.errors import LabError
from netdojo.labs.runtime import start_lab
from netdojo.labs.spec import LabSpec

from .labcli import NETDOJO, WIDE, lab_objects, lab_up, netdojo, write_lab
from .leftovers import leftovers, new_since

FIXTURE = Path(__file__).parent.parent / "fixtures" / "kathara_ospf"
OSPF_DEVICES = ["pc1", "pc2", "r1", "r2", "r3"]


def _running(name: str) -> dict[str, str]:
    """The lab's containers (id -> device:state); every one must be running."""
    found = lab_objects(name).containers
    assert sorted(found.values()) == sorted(f"{d}:running" for d in OSPF_DEVICES), found
    return found


def test_a_clashing_lab_up_leaves_the_running_lab_whole() -> None:
    before = leftovers()
    name = "clash-ospf"
    with lab_up(FIXTURE, name) as first:
        assert first.returncode == 0, first.stdout + first.stderr
        objects = lab_objects(name)
        containers = _running(name)
        clash = netdojo("lab", "up", str(FIXTURE), "--name", name)
        assert clash.returncode == 2
        lines = clash.stderr.strip().splitlines()
        assert lines[-1] == (
            f"error: a lab named '{name}' is already running; give this one another name, "
            f"or take that one down first (netdojo lab down {name})"
        )
        # Before it, only the account of other, dead processes' leftovers it removed.
        assert all(line.startswith("leftovers of dead processes:") for line in lines[:-1]), lines
        assert "Traceback" not in clash.stdout + clash.stderr
        after = lab_objects(name)
        assert after.containers == containers and after.networks == objects.networks
        assert netdojo("lab", "exec", name, "r1", "--", "true").returncode == 0
        assert netdojo("lab", "info", name).returncode == 0, "its record must stay too"
    assert lab_objects(name).empty
    assert new_since(before) == {}


@pytest.mark.anyio
async def test_a_deploy_that_clashes_anyway_removes_only_its_own_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two deploys of one name at once both pass the name check; the loser finds the winner's
    networks (Kathará reuses them) and trips over its devices. It must remove its own device and
    network, and nothing of the winner's."""
    before = leftovers()
    name = "race-ospf"
    monkeypatch.setattr("netdojo.labs.runtime.check_name_free", lambda name: None)
    loser = LabSpec.build(
        name="loser",
        devices=[{"name": "extra", "role": "host"}, {"name": "r1"}],
        links=[
            {"name": "fresh", "endpoints": [("extra", 0)]},
            {"name": "a", "endpoints": [("r1", 0)]},  # the winner's link: Kathará reuses it
        ],
    )
    with lab_up(FIXTURE, name) as winner:
        assert winner.returncode == 0, winner.stdout + winner.stderr
        objects = lab_objects(name)
        containers = _running(name)
        with pytest.raises(LabError) as caught:
            await start_lab(loser, name=name)
        assert str(caught.value) == (
            f"lab {name} could not be deployed: Device with name `r1` already exists. "
            "(MachineAlreadyExistsError)"
        )
        after = lab_objects(name)
        assert after.containers == containers, "the winner's devices are untouched"
        assert after.networks == objects.networks, "its networks too, and the loser's are gone"
        assert after.deployments == objects.deployments
        ping = netdojo("lab", "exec", name, "r1", "--", "ip", "link", "show", "eth0")
        assert ping.returncode == 0 and "state UP" in ping.stdout
    assert new_since(before) == {}


def _chain(root: Path, hosts: int) -> Path:
    """Hosts in a line whose lab.dep makes Kathará start them one by one: a slow deploy."""
    conf = [f'LAB_DESCRIPTION="{hosts} hosts started one by one"']
    conf += [f"h{i}[0]=L{i}\nh{i}[1]=L{i + 1}" for i in range(1, hosts + 1)]
    dep = [f"h{i}: h{i - 1}" for i in range(2, hosts + 1)]
    return write_lab(root, {"lab.conf": "\n".join(conf) + "\n", "lab.dep": "\n".join(dep) + "\n"})


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_deploy_stopped_half_way_removes_only_its_own_objects(
    tmp_path: Path, stop: signal.Signals
) -> None:
    before = leftovers()
    keep, doomed = "kept-ospf", f"doomed-{stop.name.lower()}"
    folder = _chain(tmp_path / "chain", hosts=8)
    with lab_up(FIXTURE, keep) as kept:
        assert kept.returncode == 0, kept.stdout + kept.stderr
        objects = lab_objects(keep)
        containers = _running(keep)
        deploy = subprocess.Popen(
            [NETDOJO, "lab", "up", str(folder), "--name", doomed],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=WIDE,
        )
        try:
            deadline = time.monotonic() + 120
            while len(lab_objects(doomed).containers) < 2:
                assert deploy.poll() is None, "the deploy ended before it could be stopped"
                assert time.monotonic() < deadline, "no device of the deploy appeared"
                time.sleep(0.05)
            assert deploy.poll() is None, "the deploy must still be under way"
            deploy.send_signal(stop)
            out, err = deploy.communicate(timeout=180)
        finally:
            if deploy.poll() is None:
                deploy.kill()
                deploy.wait()
            netdojo("lab", "down", doomed)
        assert deploy.returncode == 2, out + err
        assert f"error: stopped by {stop.name}: lab {doomed} was not deployed" in err
        assert "Traceback" not in out + err
        assert lab_objects(doomed).empty, "what the stopped deploy created is gone"
        after = lab_objects(keep)
        assert after.containers == containers and after.networks == objects.networks
    assert new_since(before) == {}


def test_a_lab_without_a_name_gets_a_readable_one_of_its_own() -> None:
    before = leftovers()
    names: list[str] = []
    try:
        for _ in range(2):
            up = netdojo("lab", "up", str(FIXTURE))
            found = re.search(r"^lab (\S+) is up", up.stdout, re.MULTILINE)
            if found:
                names.append(found[1])
            assert up.returncode == 0, up.stdout + up.stderr
        base = names[0]
        assert re.fullmatch(r"kathara_ospf(-\d+)?", base), base
        assert names[1] != base and names[1].startswith("kathara_ospf-"), names
        assert "OSPF triangle: three FRR routers in area 0, two hosts" in up.stdout
    finally:
        for name in names:
            netdojo("lab", "down", name)
    assert new_since(before) == {}
