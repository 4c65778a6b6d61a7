"""The lab-services family: every fault type drawn at every level, the servers' files as the
lab gets them, faults that change one line, and the lease and lookup reads."""

from __future__ import annotations

import ipaddress
from typing import cast

import pytest

from netdojo.clients.heuristic import fixes_services
from netdojo.judges.service_checks import parse_lease
from netdojo.labs.runtime import ExecResult, LiveLab
from netdojo.scenarios.generate import generate
from netdojo.scenarios.registry import LEVELS, family
from netdojo.scenarios.services import DHCP_CONF, DNS_CONF, ZONE
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.read_allowlist import ReadRefused, parse_read
from netdojo.tools.service import SERVICE, ServiceArguments, config_problem
from netdojo.tools.spec import InvalidArguments
from netdojo.tools.trajectory import Trajectory

from .labless_tools import two_devices

NAME = "lab-services"


@pytest.mark.parametrize("level", LEVELS)
def test_every_type_is_drawn_at_every_level(level: int) -> None:
    drawn: set[str] = set()
    for seed in range(1, 41):
        drawn |= {f.type for f in generate(NAME, level, seed).hidden.faults}
    assert set(family(NAME).types) <= drawn


def test_instances_repeat_and_the_brief_keeps_the_fault_hidden() -> None:
    for seed in range(1, 11):
        scenario = generate(NAME, 1, seed)
        assert scenario.model_dump_json() == generate(NAME, 1, seed).model_dump_json()
        brief = scenario.public.brief.lower()
        for word in ("scope", "range", "record", "zone", "dnsmasq", "option", "typo"):
            assert word not in brief, brief


def test_hosts_lease_their_planned_address_and_one_router_serves_the_zone() -> None:
    lab = generate(NAME, 1, 3).hidden.lab
    hosts = [d for d in lab.devices if d.role == "host"]
    assert hosts and all("dhclient" in d.startup[0] for d in hosts)
    dhcp = [d for d in lab.devices if DHCP_CONF in d.files]
    assert len(dhcp) == len(hosts)
    for device in dhcp:
        text = device.files[DHCP_CONF]
        first, last = text.split("dhcp-range=")[1].split(",")[:2]
        assert first == last and "port=0" in text
    (dns,) = [d for d in lab.devices if DNS_CONF in d.files]
    zone = dns.files[DNS_CONF]
    assert "no-resolv" in zone and f"local=/{ZONE}/" in zone
    assert zone.count("host-record=") == len(hosts)


def test_a_fault_rewrites_one_line_of_a_server_file_and_the_fix_restores_it() -> None:
    for seed in range(1, 31):
        for fault in generate(NAME, 2, seed).hidden.faults:
            if fault.red_herring:
                continue
            wrong, right = fault.inject[0].arguments, fault.fix[0].arguments
            assert wrong["device"] == right["device"] == fault.device
            before, after = wrong["config"].splitlines(), right["config"].splitlines()
            changed = set(before) ^ set(after)
            assert 1 <= len(changed) <= 2 and abs(len(before) - len(after)) <= 1
            if fault.type.startswith("dhcp."):
                assert [c.arguments["service"] for c in fault.fix] == ["dhcp-server", "dhcp-client"]


def test_a_lease_file_gives_the_last_lease() -> None:
    text = (
        'lease {\n  interface "eth0";\n  fixed-address 10.0.0.9;\n}\n'
        'lease {\n  interface "eth0";\n  fixed-address 10.1.1.57;\n'
        "  option subnet-mask 255.255.255.0;\n  option routers 10.1.1.1;\n"
        "  option domain-name-servers 10.255.0.7;\n}\n"
    )
    assert parse_lease(text) == {
        "address": "10.1.1.57",
        "subnet-mask": "255.255.255.0",
        "routers": "10.1.1.1",
        "domain-name-servers": "10.255.0.7",
    }
    assert parse_lease("") == {}


def test_an_agent_reads_the_service_files_and_looks_names_up() -> None:
    assert parse_read(f"cat {DNS_CONF}").argv == ["cat", DNS_CONF]
    assert parse_read(f"dig @10.255.0.7 +short h1.{ZONE} A").argv[0] == "dig"
    for command in ("dig -f /etc/passwd", "dig h1 ; rm -rf /", "cat /etc/shadow"):
        with pytest.raises(ReadRefused):
            parse_read(command)


class ObligingLab:
    """Writes nothing and runs every command with success: what the service tool records."""

    async def write_file(self, device: str, path: str, content: str) -> None:
        pass

    async def exec(self, device: str, argv: list[str], timeout: float) -> ExecResult:
        return ExecResult(
            device=device, argv=argv, exit_code=0, stdout="", stderr="", duration_s=0.0
        )


@pytest.mark.anyio
async def test_a_service_call_carried_out_is_a_state_change() -> None:
    tools = LabTools(cast(LiveLab, ObligingLab()), two_devices(), Trajectory(episode="e"))
    calls = [
        ServiceArguments(device="r1", service="dhcp-relay", config="port=0\n"),
        ServiceArguments(device="h1", service="dhcp-client"),
        ServiceArguments(device="h1", service="dhcp-client", config="port=0\n"),
    ]
    done = [await SERVICE.run(tools, arguments) for arguments in calls]
    assert [result.ok for result in done] == [True, True, False], "a client takes no file"
    assert [step.changed_state for step in tools.trajectory.steps] == [True, True, False]
    assert tools.trajectory.state_changes == 2


def test_the_heuristic_agent_puts_each_faulted_file_back_from_the_public_topology() -> None:
    for seed in range(1, 31):
        scenario = generate(NAME, 1, seed)
        addresses = {
            d.name: (d.interfaces[0].address or "").split("/")[0]
            for d in scenario.public.devices
            if d.role == "host"
        }
        network_dns = next(
            line.split("=", 1)[1]
            for d in scenario.hidden.lab.devices
            for line in d.files.get(DNS_CONF, "").splitlines()
            if line.startswith("listen-address=")
        )
        for fault in scenario.hidden.faults:
            if fault.red_herring:
                continue
            wrong = fault.inject[0].arguments["config"].splitlines()
            right = fault.fix[0].arguments["config"].splitlines()
            if fault.type.startswith("dns."):
                assert fixes_services._zone(wrong, addresses) == right
                continue
            host = fault.params["host"]
            (port,) = next(d for d in scenario.public.devices if d.name == host).interfaces
            gateway = next(
                i.address
                for d in scenario.public.devices
                for i in d.interfaces
                if d.name == fault.device and i.link == port.link
            )
            assert port.address and gateway
            fixed = fixes_services._scope(
                wrong, ipaddress.IPv4Interface(port.address), gateway.split("/")[0], network_dns
            )
            assert fixed == right, fault.type


def test_a_server_file_may_not_run_programs_read_files_or_forward_upstream() -> None:
    scenario = generate(NAME, 1, 1)
    for device in scenario.hidden.lab.devices:
        for path in (DHCP_CONF, DNS_CONF):
            if path in device.files:
                assert config_problem(device.files[path]) is None
    for fault in scenario.hidden.faults:
        for call in fault.inject + fault.fix:
            assert config_problem(call.arguments.get("config", "")) is None
    for line in ("dhcp-script=/bin/sh", "conf-file=/etc/shadow", "server=192.0.2.1",
                 "addn-hosts=/etc/frr/frr.conf", "log-facility=/etc/frr/frr.conf",
                 "user=root", "enable-tftp"):  # fmt: skip
        assert config_problem(f"port=0\n{line}\n"), line
    with pytest.raises(InvalidArguments):
        ServiceArguments.checked(
            {"device": "r1", "service": "dns-server", "config": "dhcp-script=/x"}
        )
