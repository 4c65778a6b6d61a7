"""Loading Kathará lab folders into `LabSpec` (pure parsing; no Docker)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import pytest

from netdojo.labs.errors import LabSpecError
from netdojo.labs.labfolder import collision_domain_names, load_lab_folder
from netdojo.labs.names import NAME_PATTERN
from netdojo.labs.spec import DEFAULT_IMAGE, LabSpec, start_order

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
    loaded = load_lab_folder(FIXTURE)
    assert loaded.warnings == []
    assert loaded.about == {
        "description": "OSPF triangle: three FRR routers in area 0, two hosts",
        "version": "1.0",
        "author": "netdojo",
    }
    return loaded.spec


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
    assert any(
        "line 2: bridged of 'r1' would connect the device to the host" in p for p in problems
    )
    assert any("line 4: cannot parse 'r1[1] = B'" in p for p in problems)
    assert any("r9.startup belongs to no device" in p for p in problems)
    assert any("device name '1r' must match" in p for p in problems)


def test_bad_values_are_reported_with_their_lines(tmp_path: Path) -> None:
    conf = "r1[0]=A\nr1[0]=B\nr1[mem]=lots\nr1[colour]=red\nr1[1]=A-B\nr1[ipv6]=maybe\n"
    lab = _write_lab(tmp_path / "lab", {"lab.conf": conf, "lab.ext": "A eth0\n"})
    assert _problems(lab) == [
        "lab.conf line 2: eth0 of 'r1' is already on collision domain 'A'",
        "lab.conf line 3: mem of 'r1' must be a size such as 128m or 1g, not 'lots'",
        "lab.conf line 4: option 'colour' of device 'r1' is not supported; the supported "
        "options are image, mem, cpus, ipv6, exec, sysctl, env, ulimit, port",
        "lab.conf line 5: collision domain 'A-B' may hold only letters, digits and '_'",
        "lab.conf line 6: ipv6 of 'r1' must be true or false, not 'maybe'",
        "lab.ext would attach collision domains to the host's interfaces; "
        "netdojo labs never reach off the machine: remove lab.ext to run the lab on its own",
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
    loaded = load_lab_folder(
        _write_lab(tmp_path / "x", {"lab.conf": conf, "r1.startup": "echo 1\n"})
    )
    lab = loaded.spec
    assert (lab.name, loaded.title) == ("my-ospf-lab", "My OSPF Lab")
    r1, h1, h2 = lab.devices
    assert (r1.image, r1.role, r1.ipv6) == (DEFAULT_IMAGE, "router", True)
    assert (r1.limits.memory_mib, r1.limits.cpus) == (128, 1.5)
    assert r1.startup == ["echo 1", "echo last"]
    assert (h1.image, h1.role, h1.limits.memory_mib) == ("alpine:3.20", "host", 1024)
    assert (h2.image, h2.ipv6, h2.limits.memory_mib) == (DEFAULT_IMAGE, False, 512)
    assert h2.limits.cpus == h1.limits.cpus == 0.5
    assert loaded.warnings == []


def test_every_supported_option_reaches_the_device(tmp_path: Path) -> None:
    conf = """\
LAB_DESCRIPTION="Leaf and spine, ECMP"
LAB_VERSION=2.1
LAB_AUTHOR='Someone'
LAB_EMAIL=someone@example.org
LAB_WEB=https://example.org/lab
leaf1[0]="fabric/02:42:0A:00:00:01"
leaf1[1]=hosts
leaf1[sysctl]="net.ipv4.fib_multipath_hash_policy=1"
leaf1[sysctl]=net.ipv4.conf.eth1.rp_filter=2
leaf1[sysctl]="net.ipv4.tcp_congestion_control=reno"
leaf1[env]="ROLE=leaf"
leaf1[env]=EMPTY=
leaf1[ulimit]="nofile=1024:2048"
leaf1[ulimit]=nproc=-1
leaf1[ulimit]=stack=900:800
leaf1[port]=8080:80
leaf1[port]="5353:53/udp"
leaf1[port]=22
leaf1[exec]="echo one"
leaf1[exec]="echo two"
spine1[0]=fabric
host1[0]=hosts
"""
    loaded = load_lab_folder(_write_lab(tmp_path / "fabric", {"lab.conf": conf}))
    assert loaded.about == {
        "description": "Leaf and spine, ECMP",
        "version": "2.1",
        "author": "Someone",
        "email": "someone@example.org",
        "web": "https://example.org/lab",
    }
    leaf = loaded.spec.device("leaf1")
    assert leaf.sysctls == {
        "net.ipv4.fib_multipath_hash_policy": 1,
        "net.ipv4.conf.eth1.rp_filter": 2,
        "net.ipv4.tcp_congestion_control": "reno",
    }
    assert leaf.macs == {0: "02:42:0a:00:00:01"}
    assert leaf.env == {"ROLE": "leaf", "EMPTY": ""}
    assert {k: (v.soft, v.hard) for k, v in leaf.ulimits.items()} == {
        "nofile": (1024, 2048),
        "nproc": (-1, -1),
        "stack": (800, 800),  # soft above hard is lowered to it, as Kathará does
    }
    assert [(p.host, p.device, p.protocol) for p in leaf.ports] == [
        (8080, 80, "tcp"),
        (5353, 53, "udp"),
        (3000, 22, "tcp"),  # Kathará's host port when the line names none
    ]
    assert leaf.startup == ["echo one", "echo two"]
    assert loaded.spec.device("spine1").macs == {}
    assert loaded.warnings == []


def test_terminal_options_are_ignored_with_one_plain_line_each(tmp_path: Path) -> None:
    conf = "r1[0]=A\nr1[num_terms]=2\nr1[shell]=/bin/sh\nr1[sysctl]=net.ipv4.ip_forward=1\n"
    conf += "r1[sysctl]=net.ipv4.ip_forward=0\nr1[image]=a\nr1[image]=b\n"
    loaded = load_lab_folder(_write_lab(tmp_path / "lab", {"lab.conf": conf}))
    assert loaded.warnings == [
        "lab.conf line 2: num_terms of 'r1' ignored: netdojo opens no terminals; "
        "use `netdojo lab connect LAB DEVICE`",
        "lab.conf line 3: shell of 'r1' ignored: startup commands and `netdojo lab connect` "
        "use /bin/bash",
        "lab.conf line 5: sysctl net.ipv4.ip_forward of 'r1' set again; the last wins",
        "lab.conf line 7: image of 'r1' set again; the last value wins",
    ]
    assert all("\n" not in warning for warning in loaded.warnings)
    assert loaded.spec.device("r1").sysctls == {"net.ipv4.ip_forward": 0}
    assert loaded.spec.device("r1").image == "b"


def test_bad_option_values_are_refused_with_what_they_must_be(tmp_path: Path) -> None:
    conf = """\
r1[0]=A/02:42:ac:11:00
r2[0]=A/03:00:00:00:00:01
r1[sysctl]=kernel.core_pattern=/tmp/x
r1[sysctl]=net.ipv4.ip_forward
r1[env]=NO_VALUE
r1[ulimit]=nofile
r1[ulimit]=nofile=-1:10
r1[ulimit]=colours=3
r1[port]=http
r1[port]=80/sctp
r1[port]=70000:80
"""
    problems = _problems(_write_lab(tmp_path / "lab", {"lab.conf": conf}))
    assert problems == [
        "lab.conf line 3: sysctl of 'r1' must be net.KEY=VALUE (only net.* settings), "
        "not 'kernel.core_pattern=/tmp/x'",
        "lab.conf line 4: sysctl of 'r1' must be net.KEY=VALUE (only net.* settings), "
        "not 'net.ipv4.ip_forward'",
        "lab.conf line 5: env of 'r1' must be NAME=VALUE, not 'NO_VALUE'",
        "lab.conf line 6: ulimit of 'r1' must be NAME=SOFT[:HARD], not 'nofile'",
        "lab.conf line 7: ulimit of 'r1' 'nofile=-1:10': limits are -1 (unlimited) or more, "
        "soft at most hard",
        "lab.conf line 9: port of 'r1' must be [HOST:]DEVICE[/tcp|udp], not 'http'",
        "lab.conf line 10: port of 'r1' protocol 'sctp' is not supported; use tcp or udp",
        "device 'r1': ulimit 'colours' is not one of as, core, cpu, data, fsize, locks, "
        "memlock, msgqueue, nice, nofile, nproc, rss, rtprio, rttime, sigpending, stack",
        "device 'r1': port 70000 must be within 1..65535",
        "device 'r1': MAC address '02:42:ac:11:00' of eth0 must be six lower-case hex pairs "
        "such as 02:42:0a:00:00:01",
        "device 'r2': MAC address '03:00:00:00:00:01' of eth0 is a multicast address; "
        "use a unicast one (even first octet)",
    ]


def test_what_would_reach_off_the_machine_is_refused_with_what_to_do(tmp_path: Path) -> None:
    conf = "r1[0]=A\nr1[bridged]=true\nr1[privileged]=yes\nr1[volume]=/etc|/mnt/etc|ro\n"
    problems = _problems(_write_lab(tmp_path / "lab", {"lab.conf": conf, "lab.ext": "A eth1\n"}))
    assert problems == [
        "lab.conf line 2: bridged of 'r1' would connect the device to the host's network; "
        "netdojo labs never reach off the machine: remove the line, and use "
        "r1[port]=HOST:DEVICE to reach one of its ports from this machine "
        "(bound on 127.0.0.1 only)",
        "lab.conf line 3: privileged of 'r1' would hand the device the host's kernel; netdojo "
        "labs never reach off the machine: remove the line (devices get the capabilities "
        "routing needs)",
        "lab.conf line 4: volume of 'r1' would mount a host folder into the device; netdojo "
        "labs never reach off the machine: put the files in the lab's r1/ folder instead",
        "lab.ext would attach collision domains to the host's interfaces; "
        "netdojo labs never reach off the machine: remove lab.ext to run the lab on its own",
    ]


def test_lab_dep_orders_the_devices_start(tmp_path: Path) -> None:
    conf = "pc1[0]=A\nr1[0]=A\nr1[1]=B\nr2[0]=B\nsrv[0]=B\n"
    dep = "# servers first\npc1: r1 srv\nr1:r2\n\nr2: srv\n"
    spec = load_lab_folder(_write_lab(tmp_path / "lab", {"lab.conf": conf, "lab.dep": dep})).spec
    assert spec.device("pc1").depends_on == ["r1", "srv"]
    assert spec.device("r1").depends_on == ["r2"]
    assert spec.device("srv").depends_on == []
    assert start_order(spec) == ["srv", "r2", "r1", "pc1"]


def test_lab_dep_problems_name_the_line_or_the_devices(tmp_path: Path) -> None:
    conf = "a[0]=X\nb[0]=X\nc[0]=X\n"
    dep = "a: b\nb: a\nc: ghost\nd -> a\n"
    problems = _problems(_write_lab(tmp_path / "lab", {"lab.conf": conf, "lab.dep": dep}))
    assert problems == [
        "lab.dep line 4: cannot parse 'd -> a'",
        "lab.dep names 'ghost', which is no device of lab.conf",
        "devices a, b depend on each other in a loop",
    ]


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
    spec = load_lab_folder(lab).spec
    assert spec.name == "lab-2024-lab"
    a, b = spec.devices
    assert a.startup == ["echo shared", "echo a"]
    assert b.startup == ["echo shared"]
    assert a.files == {"/shared/hosts": "mine\n", "/etc/quagga/ospfd.conf": "router ospf\n"}
    assert b.files == {"/shared/hosts": "10.0.0.1 a\n"}
    assert (a.role, b.role) == ("router", "host")


def test_skipped_things_are_warned(tmp_path: Path) -> None:
    lab = _write_lab(
        tmp_path / "lab",
        {
            "lab.conf": "r1[0]=A\n",
            "r1/bin/tool": b"\x7fELF\x00\x01",
            "r1/etc/motd": "hello\n",
            "r1.shutdown": "echo bye\n",
        },
    )
    loaded = load_lab_folder(lab)
    assert sorted(loaded.warnings) == [
        "r1.shutdown ignored: netdojo removes devices without shutting them down",
        "r1/bin/tool: skipped, not a UTF-8 text file",
    ]
    assert loaded.spec.device("r1").files == {"/etc/motd": "hello\n"}


def test_the_spec_name_keeps_whole_words(tmp_path: Path) -> None:
    conf = 'LAB_NAME="Data centre fabric with EVPN and VXLAN overlays"\nr1[0]=A\n'
    loaded = load_lab_folder(_write_lab(tmp_path / "x", {"lab.conf": conf}))
    assert loaded.spec.name == "data-centre-fabric-with-evpn"
    assert loaded.title == "Data centre fabric with EVPN and VXLAN overlays"


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
        load_lab_folder(_write_lab(tmp_path / name, {"lab.conf": conf})).spec
        for name, conf in (("f", forward), ("b", backward))
    ]
    assert specs[0].interfaces("r1") == specs[1].interfaces("r1") == [(0, "lan-2"), (1, "lan-3")]
    assert specs[0].interfaces("r2") == specs[1].interfaces("r2") == [(0, "lan")]
