"""The checkers of address-translation tests: a port forward answered by the right inside
server, the source address an outside server sees, and a line of a netfilter listing.

A forward's target is the edge's own address, so the witness is not its owner but the
test's ``server``: its TCP passive opens must grow while the client connects. The seen source
is read on the server itself: it listens for one connection for the test and writes down
the peer address it accepted.
"""

from __future__ import annotations

import secrets

from netdojo.judges.checks import (
    CheckContext,
    CheckUnavailable,
    Observed,
    checker,
    parse_counters,
    ran,
)
from netdojo.scenarios.hidden_tests import ForwardTest, NetfilterTest, SeenSourceTest

LISTEN_S = 6
ONE_ACCEPT = (
    "import socket\n"
    "s = socket.create_server(('', {port}), reuse_port=True)\n"
    "s.settimeout({wait})\n"
    "c, peer = s.accept()\n"
    "print(peer[0], flush=True)\n"
    "c.close()\n"
)
READY = "for i in $(seq 30); do ss -ltn | grep -q ':{port} ' && break; sleep 0.1; done"


async def _passive_opens(ctx: CheckContext, device: str) -> int:
    done = ran(await ctx.lab.exec_entered(device, ["cat", "/proc/net/snmp"]), "reading counters")
    if not done.ok:
        raise CheckUnavailable(f"cannot read counters on {device}: {done.stderr.strip()}")
    return parse_counters(done.stdout).get("Tcp.PassiveOpens", 0)


@checker(ForwardTest)
async def _forward(ctx: CheckContext, test: ForwardTest) -> Observed:
    params = test.params
    argv = ["nc", "-z", "-w", "2", params.target, str(params.port)]
    what = f"{test.device} -> {params.target}:{params.port}"
    if ctx.owners is None:
        done = ran(await ctx.lab.exec_entered(test.device, argv), "nc")
        return done.ok, f"{what} {'open' if done.ok else 'closed'}"
    async with ctx.lock(params.server):
        before = await _passive_opens(ctx, params.server)
        done = ran(await ctx.lab.exec_entered(test.device, argv), "nc")
        accepted = await _passive_opens(ctx, params.server) - before
    if done.ok and accepted > 0:
        return True, f"{what} open, accepted by {params.server}"
    if done.ok:
        return False, f"{what} connected, but {params.server} accepted no connection"
    return False, f"{what} closed or filtered after {done.duration_s:.1f}s"


@checker(SeenSourceTest)
async def _seen_source(ctx: CheckContext, test: SeenSourceTest) -> Observed:
    params = test.params
    if ctx.owners is not None and ctx.owner(params.target) != params.server:
        raise CheckUnavailable(f"{params.target} belongs to {ctx.owner(params.target)}")
    tag = f"/tmp/netdojo-peer-{secrets.token_hex(4)}"
    script = ONE_ACCEPT.format(port=params.port, wait=LISTEN_S)
    ready = READY.format(port=params.port)
    listen = (
        f'python3 -c "{script}" >{tag}.log 2>/dev/null </dev/null & echo $! >{tag}.pid; {ready}'
    )

    what = f"{test.device} -> {params.target}:{params.port}"
    async with ctx.lock(params.server):
        started = ran(
            await ctx.lab.exec_entered(params.server, ["sh", "-c", listen], timeout=10),
            "starting a listener",
        )
        if not started.ok:
            raise CheckUnavailable(f"listener on {params.server}: {started.stderr.strip()[:200]}")
        try:
            argv = ["nc", "-z", "-w", "2", params.target, str(params.port)]
            ran(await ctx.lab.exec_entered(test.device, argv), "nc")
            read = f"sleep 0.3; cat {tag}.log"
            seen = ran(await ctx.lab.exec_entered(params.server, ["sh", "-c", read]), "reading")
        finally:
            stop = f"kill $(cat {tag}.pid) 2>/dev/null; rm -f {tag}.pid {tag}.log; true"
            await ctx.lab.exec_entered(params.server, ["sh", "-c", stop], timeout=10)
    source = seen.stdout.strip()
    if not source:
        return False, f"{what}: {params.server} accepted no connection"
    return source == params.source, f"{what}: {params.server} saw the connection from {source}"


@checker(NetfilterTest)
async def _netfilter(ctx: CheckContext, test: NetfilterTest) -> Observed:
    params = test.params
    done = ran(await ctx.lab.exec_entered(test.device, params.command.split()), params.command)
    if not done.ok:
        raise CheckUnavailable(f"`{params.command}` on {test.device}: {done.stderr.strip()[:200]}")
    found = [
        line.strip()
        for line in done.stdout.splitlines()
        if all(word in line.split() for word in params.words)
    ]
    wanted = " ".join(params.words)
    if found:
        return True, f"{test.device}: `{found[0]}`"
    return False, f"{test.device}: no line of `{params.command}` holds `{wanted}`"
