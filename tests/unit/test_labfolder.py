"""Loading Kathará lab folders into `LabSpec` (pure parsing; no Docker)."""

from __future__ import annotations

import ipaddress
import re
import warnings
from pathlib import Path

import pytest

from netdojo.labs.errors import LabSpecError
from netdojo.labs.labfolder import LabFolderWarning, collision_domain_names, load_lab_folder
from netdojo.labs.spec import DEFAULT_IMAGE, NAME_PATTERN, LabSpec

FIXTURE = Path(__file__).parent.parent / "fixtures" / "kathara_ospf"


def _write_lab(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def _problems(root: Path) -> list[str]:
    with pytest.raises(LabSpecError) as caught:
        load_lab_folder(root)
    return caught.value.problems


@pytest.fixture(scope="module")
def ospf() -> LabSpec:
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabFolderWarning)
        return load_lab_folder(FIXTURE)


def test_fixture_devices_roles_and_images(ospf: LabSpec) -> None:
    assert ospf.name == "kathara_ospf"
    roles = {d.name: d.role for d in ospf.devices}
    assert roles == {"r1": "router", "r2": "router", "r3": "router", "pc1": "host", "pc2": "host"}
    assert [d.name for d in ospf.devices] == ["r1", "r2", "r3", "pc1", "pc2"]
    assert {d.image for d in ospf.devices} == {DEFAULT_IMAGE}


def test_fixture_interfaces_in_order(ospf: LabSpec) -> None:
    assert ospf.interfaces("r1") == [(0, "a"), (1, "c"), (2, "d")]
    assert ospf.interfaces("r2") == [(0, "a"), (1, "b")]
    assert ospf.interfaces("r3") == [(0, "b"), (1, "c"), (2, "e")]
    assert ospf.interfaces("pc1") == [(0, "d")]
    assert ospf.interfaces("pc2") == [(0, "e")]


def test_fixture_startup_lines_are_verbatim(ospf: LabSpec) -> None:
    assert ospf.device("r2").startup == [
        "ip address add 10.0.1.2/30 dev eth0",
        "ifconfig eth1 10.0.2.1 netmask 255.255.255.252 up",
        "",
        "service frr start",
    ]
    assert ospf.device("pc1").startup == [
        "ip address add 10.0.10.10/24 dev eth0",
        "route add default gw 10.0.10.1",
    ]
    assert ospf.device("r1").startup[-1] == "systemctl start frr"
    assert ospf.device("r3").startup[-1] == "/etc/init.d/frr start"


def test_fixture_files_land_at_device_paths(ospf: LabSpec) -> None:
    r1 = ospf.device("r1")
    assert set(r1.files) == {"/etc/frr/daemons", "/etc/frr/frr.conf"}
    assert "ospfd=yes" in r1.files["/etc/frr/daemons"].splitlines()
    assert "timers throttle spf 0 50 500" in r1.files["/etc/frr/frr.conf"]
    assert ospf.device("pc1").files == {}


def _addresses(spec: LabSpec) -> dict[tuple[str, int], ipaddress.IPv4Interface]:
    """Interface addresses set by the startup lines (``ip address add`` and ``ifconfig``)."""
    found = {}
    for dev in spec.devices:
        for line in dev.startup:
            if m := re.fullmatch(r"ip address add (\S+) dev eth(\d+)", line):
                found[dev.name, int(m[2])] = ipaddress.IPv4Interface(m[1])
            elif m := re.fullmatch(r"ifconfig eth(\d+) (\S+) netmask (\S+) up", line):
                found[dev.name, int(m[1])] = ipaddress.IPv4Interface(f"{m[2]}/{m[3]}")
    return found


def test_fixture_addressing_lets_ospf_join_pc1_and_pc2(ospf: LabSpec) -> None:
    addresses = _addresses(ospf)
    for link in ospf.links:
        networks = {addresses[end].network for end in link.endpoints}
        assert len(networks) == 1, f"link {link.name} mixes subnets {networks}"
    for router in (d for d in ospf.devices if d.role == "router"):
        conf = router.files["/etc/frr/frr.conf"]
        advertised = {ipaddress.IPv4Network(n) for n in re.findall(r"network (\S+) area 0", conf)}
        own = {addresses[router.name, idx].network for idx, _ in ospf.interfaces(router.name)}
        assert own == advertised
    gateways = {
        "pc1": re.search(r"gw (\S+)", ospf.device("pc1").startup[-1]),
        "pc2": re.search(r"via (\S+)", ospf.device("pc2").startup[-1]),
    }
    for host, gateway in gateways.items():
        assert gateway is not None
        (link,) = [link for link in ospf.links if (host, 0) in link.endpoints]
        router_ends = [end for end in link.endpoints if end[0] != host]
        assert [str(addresses[end].ip) for end in router_ends] == [gateway[1]]


def test_every_problem_is_listed_in_one_error(tmp_path: Path) -> None:
    lab = _write_lab(
        tmp_path / "broken",
        {
            "lab.conf": "r1[0]=A\nr1[bridged]=true\n1r[0]=A\nr1[1] = B\n",
            "r9.startup": "echo hi\n",
        },
    )
    problems = _problems(lab)
    assert len(problems) == 4, problems
    assert any("line 2" in p and "'r1' is bridged" in p for p in problems)
    assert any("line 4: cannot parse 'r1[1] = B'" in p for p in problems)
    assert any("r9.startup belongs to no device" in p for p in problems)
    assert any("device name '1r' must match" in p for p in problems)


def test_bad_values_are_reported_with_their_lines(tmp_path: Path) -> None:
    conf = "r1[0]=A\nr1[0]=B\nr1[mem]=lots\nr1[colour]=red\nr1[1]=A-B\nr1[ipv6]=maybe\n"
    lab = _write_lab(tmp_path / "lab", {"lab.conf": conf, "lab.ext": "A eth0\n"})
    assert _problems(lab) == [
        "lab.conf line 2: eth0 of 'r1' is already on collision domain 'A'",
        "lab.conf line 3: mem of 'r1' must be a size such as 128m or 1g, not 'lots'",
        "lab.conf line 4: option 'colour' of device 'r1' is not supported",
        "lab.conf line 5: collision domain 'A-B' may hold only letters, digits and '_'",
        "lab.conf line 6: ipv6 of 'r1' must be true or false, not 'maybe'",
        "lab.ext attaches collision domains to host interfaces; "
        "netdojo labs never reach off the machine",
    ]


def test_spec_problems_join_the_loader_problems(tmp_path: Path) -> None:
    lab = _write_lab(tmp_path / "lab", {"lab.conf": "r1[0]=A\nr1[2]=B\nr1[cpus]=x\n"})
    problems = _problems(lab)
    assert problems[0].startswith("lab.conf line 3: cpus of 'r1'")
    assert "interfaces of 'r1' must be numbered eth0..eth1 with no gap" in problems[1]


def test_missing_lab_conf_is_refused(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    assert _problems(tmp_path) == [f"{tmp_path}: no lab.conf, so this is not a Kathará lab folder"]


def test_options_map_to_image_limits_ipv6_and_exec(tmp_path: Path) -> None:
    conf = """\
LAB_NAME="My OSPF Lab"
r1[0]='A'
r1[image]="kathara/frr:latest"   # comment after a quoted value
r1[mem]="128m"
r1[cpus]=1.5
r1[ipv6]=true
r1[exec]="echo last"
h1[0]=A
h1[image]=alpine:3.20
h1[mem]=1g
h2[0]=A
h2[mem]=512
h2[bridged]=false
"""
    lab = load_lab_folder(_write_lab(tmp_path / "x", {"lab.conf": conf, "r1.startup": "echo 1\n"}))
    assert lab.name == "my-ospf-lab"
    r1, h1, h2 = lab.devices
    assert (r1.image, r1.role, r1.ipv6) == (DEFAULT_IMAGE, "router", True)
    assert (r1.limits.memory_mib, r1.limits.cpus) == (128, 1.5)
    assert r1.startup == ["echo 1", "echo last"]
    assert (h1.image, h1.role, h1.limits.memory_mib) == ("alpine:3.20", "host", 1024)
    assert (h2.image, h2.ipv6, h2.limits.memory_mib) == (DEFAULT_IMAGE, False, 512)
    assert h2.limits.cpus == h1.limits.cpus == 0.5


def test_shared_startup_and_folder_reach_every_device(tmp_path: Path) -> None:
    lab = _write_lab(
        tmp_path / "2024 lab",
        {
            "lab.conf": "a[0]=X\nb[0]=X\n",
            "shared.startup": "#!/bin/bash\necho shared\n",
            "a.startup": "#!/bin/sh\r\necho a\r\n",
            "shared/hosts": "10.0.0.1 a\n",
            "a/etc/quagga/ospfd.conf": "router ospf\n",
            "a/shared/hosts": "mine\n",
        },
    )
    spec = load_lab_folder(lab)
    assert spec.name == "lab-2024-lab"
    a, b = spec.devices
    assert a.startup == ["echo shared", "echo a"]
    assert b.startup == ["echo shared"]
    assert a.files == {"/shared/hosts": "mine\n", "/etc/quagga/ospfd.conf": "router ospf\n"}
    assert b.files == {"/shared/hosts": "10.0.0.1 a\n"}
    assert (a.role, b.role) == ("router", "host")


def test_skipped_and_ignored_things_are_warned(tmp_path: Path) -> None:
    lab = _write_lab(
        tmp_path / "lab",
        {
            "lab.conf": "r1[0]=A/02:42:ac:11:00:02\n",
            "r1/bin/tool": b"\x7fELF\x00\x01",
            "r1/etc/motd": "hello\n",
            "lab.dep": "r1: r2\n",
        },
    )
    with pytest.warns(LabFolderWarning) as caught:
        spec = load_lab_folder(lab)
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        "lab.conf line 1: MAC address '02:42:ac:11:00:02' of 'r1' eth0 ignored",
        "lab.dep ignored",
        "r1/bin/tool: skipped, not a UTF-8 text file",
    ]
    assert spec.device("r1").files == {"/etc/motd": "hello\n"}


def test_collision_domain_names_are_deterministic() -> None:
    domains = ["A", "a", "1x", "Net_Ü", "_b", "L" * 40]
    mapping = collision_domain_names(domains)
    assert mapping == collision_domain_names(reversed(domains))
    assert mapping == {
        "1x": "cd-1x",
        "A": "a",
        "L" * 40: "l" * 30,
        "Net_Ü": "net_-",
        "_b": "cd-_b",
        "a": "a-2",
    }
    assert all(re.match(NAME_PATTERN, name) for name in mapping.values())


def test_link_names_do_not_depend_on_line_order(tmp_path: Path) -> None:
    forward = "r1[0]=Lan\nr2[0]=LAN\nr1[1]=lan\n"
    backward = "r1[1]=lan\nr2[0]=LAN\nr1[0]=Lan\n"
    specs = [
        load_lab_folder(_write_lab(tmp_path / name, {"lab.conf": conf}))
        for name, conf in (("f", forward), ("b", backward))
    ]
    assert specs[0].interfaces("r1") == specs[1].interfaces("r1") == [(0, "lan-2"), (1, "lan-3")]
    assert specs[0].interfaces("r2") == specs[1].interfaces("r2") == [(0, "lan")]
