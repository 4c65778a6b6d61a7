"""The checkers of service tests: a DHCP lease obtained now by a client, and a DNS answer.

The lease probe runs a second `dhclient` on the client's port whose script does nothing and
whose lease file is its own, so the probe configures nothing and the client's own lease stays;
the probe stops once it has a lease (or gave up).
"""

from __future__ import annotations

import ipaddress
import re

from netdojo.judges.checks import CheckContext, Observed, checker, ran
from netdojo.scenarios.hidden_tests import DhcpLeaseTest, DnsAnswerTest
from netdojo.scenarios.services import CLIENT_CONF

PROBE_LEASES = "/tmp/netdojo-probe.leases"
PROBE_PID = "/tmp/netdojo-probe.pid"
PROBE_S = 25
DIG_S = 8


def _probe() -> str:
    quiet = f"-sf /bin/true -pf {PROBE_PID} -lf {PROBE_LEASES} -cf {CLIENT_CONF}"
    return (
        f"rm -f {PROBE_LEASES}; timeout 20 dhclient -4 -1 {quiet} eth0 >/dev/null 2>&1; "
        f"dhclient -x {quiet} eth0 >/dev/null 2>&1; cat {PROBE_LEASES} 2>/dev/null; true"
    )


def parse_lease(text: str) -> dict[str, str]:
    """The last lease in a dhclient lease file: its address and options."""
    blocks = re.findall(r"lease \{(.*?)\}", text, re.DOTALL)
    if not blocks:
        return {}
    found: dict[str, str] = {}
    for line in blocks[-1].splitlines():
        words = line.strip().rstrip(";").split(None, 2)
        if words and words[0] == "fixed-address" and len(words) > 1:
            found["address"] = words[1]
        elif len(words) == 3 and words[0] == "option":
            found[words[1]] = words[2]
    return found


@checker(DhcpLeaseTest)
async def _dhcp_lease(ctx: CheckContext, test: DhcpLeaseTest) -> Observed:
    params = test.params
    async with ctx.lock(test.device):
        done = ran(
            await ctx.lab.exec_entered(test.device, ["sh", "-c", _probe()], timeout=PROBE_S),
            "a DHCP request",
        )
    lease = parse_lease(done.stdout)
    if "address" not in lease:
        return False, f"{test.device}: no DHCP server answered with a lease"
    address = lease["address"]
    problems = []
    if ipaddress.ip_address(address) not in ipaddress.ip_network(params.subnet):
        problems.append(f"address {address} outside {params.subnet}")
    router, dns = lease.get("routers", ""), lease.get("domain-name-servers", "")
    if params.router is not None and router != params.router:
        problems.append(f"gateway {router or 'none'}, not {params.router}")
    if params.dns is not None and params.dns not in dns.replace(" ", "").split(","):
        problems.append(f"resolver {dns or 'none'}, not {params.dns}")
    server = lease.get("dhcp-server-identifier", "")
    if params.servers is not None and server not in params.servers:
        problems.append(f"served by {server or 'an unnamed server'}, not the lab's DHCP server")
    shown = (
        f"{test.device} leased {address} with gateway {router or 'none'}, resolver {dns or 'none'}"
        f" from {server or 'an unnamed server'}"
    )
    return not problems, shown + (f" ({'; '.join(problems)})" if problems else "")


@checker(DnsAnswerTest)
async def _dns_answer(ctx: CheckContext, test: DnsAnswerTest) -> Observed:
    params = test.params
    argv = ["dig", "+short", "+time=2", "+tries=2"]
    if params.server is not None:
        argv.append(f"@{params.server}")
    argv += [params.name, "A"]
    done = ran(await ctx.lab.exec_entered(test.device, argv, timeout=DIG_S), "a DNS lookup")
    answers = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    addresses = [a for a in answers if re.fullmatch(r"[\d.]+", a)]
    via = f"@{params.server}" if params.server else "its own resolver"
    if not addresses:
        reason = answers[0][:120] if answers else "no answer"
        return False, f"{test.device}: {params.name} via {via}: {reason}"
    shown = ", ".join(addresses)
    return params.address in addresses, f"{test.device}: {params.name} via {via} is {shown}"
