"""The checkers of data-plane tests: a TCP transfer or a throughput measured with iperf3, a
round-trip time and loss measured with ping, and a policy-routing rule.

An iperf3 server is started on the test's ``server`` for one test and stopped after it (it
serves one client and exits; a leftover is killed by its pid file). With the plan's owners
known, the server must be the owner of the target address and must have accepted the
test's connections, and the pings counted must have been answered by the owner, as for a
reachability test.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from netdojo.judges.checks import (
    CheckContext,
    CheckUnavailable,
    Observed,
    checker,
    parse_counters,
    ran,
)
from netdojo.labs.runtime import ExecResult
from netdojo.scenarios.hidden_tests import IpRuleTest, LatencyTest, ThroughputTest, TransferTest
from netdojo.tools.reachability import parse_ping

IPERF_PORT = 5201
LATENCY_INTERVAL_S = 0.01


async def _counter(ctx: CheckContext, device: str, name: str) -> int:
    done = ran(await ctx.lab.exec_entered(device, ["cat", "/proc/net/snmp"]), "reading counters")
    if not done.ok:
        raise CheckUnavailable(f"cannot read counters on {device}: {done.stderr.strip()}")
    return parse_counters(done.stdout).get(name, 0)


async def _watched(
    ctx: CheckContext, device: str, counter: str, run: Callable[[], Awaitable[Any]]
) -> tuple[Any, int | None]:
    """``run``'s result and how much ``device``'s ``counter`` grew meanwhile (None when the
    plan's owners are unknown: nothing is witnessed then), ``device`` locked throughout."""
    async with ctx.lock(device):
        if ctx.owners is None:
            return await run(), None
        before = await _counter(ctx, device, counter)
        result = await run()
        return result, await _counter(ctx, device, counter) - before


def _server_of(ctx: CheckContext, target: str, server: str) -> None:
    if ctx.owners is not None and ctx.owner(target) != server:
        raise CheckUnavailable(f"{target} belongs to {ctx.owner(target)}, not {server}")


async def _iperf(ctx: CheckContext, client: str, server: str, target: str, args: list[str],
                 limit_s: float) -> ExecResult:  # fmt: skip
    """One iperf3 run from ``client`` to ``target``, its server on ``server`` for this run."""
    pidfile = f"/tmp/netdojo-iperf-{secrets.token_hex(4)}.pid"
    port = str(IPERF_PORT)
    start = ["iperf3", "-s", "-1", "-D", "-p", port, "-I", pidfile]
    started = ran(await ctx.lab.exec_entered(server, start, timeout=10), "starting iperf3")
    if not started.ok:
        raise CheckUnavailable(f"iperf3 server on {server}: {started.stderr.strip()[:200]}")
    try:
        argv = ["iperf3", "-c", target, "-p", port, "-J", "--connect-timeout", "2000", *args]
        return await ctx.lab.exec_entered(client, argv, timeout=limit_s, max_output=1 << 20)
    finally:
        stop = f"test -f {pidfile} && kill $(cat {pidfile}); rm -f {pidfile}; true"
        await ctx.lab.exec_entered(server, ["sh", "-c", stop], timeout=10)


def _report(done: ExecResult) -> dict[str, Any] | None:
    """iperf3's JSON report of a run that ended, else None (it hung and was stopped)."""
    if done.timed_out or done.exit_code is None:
        return None
    try:
        parsed = json.loads(done.stdout)
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _received_mbps(report: dict[str, Any]) -> float:
    received = report.get("end", {}).get("sum_received", {})
    return float(received.get("bits_per_second", 0.0)) / 1e6


def _accepted(owner: str, opened: int | None) -> str:
    return "" if opened is None else f"; {owner} accepted {opened} connections"


@checker(TransferTest)
async def _transfer(ctx: CheckContext, test: TransferTest) -> Observed:
    params = test.params
    _server_of(ctx, params.target, params.server)
    size = f"{params.kilobytes}K"

    async def send() -> ExecResult:
        args = ["-n", size]
        return await _iperf(ctx, test.device, params.server, params.target, args, params.within_s)

    done, opened = await _watched(ctx, params.server, "Tcp.PassiveOpens", send)
    report = _report(done)
    what = f"{test.device} -> {params.target}: {params.kilobytes} kB over TCP"
    accepted = _accepted(params.server, opened)
    if report is None:
        return False, f"{what} did not finish within {params.within_s}s{accepted}"
    if error := report.get("error"):
        return False, f"{what} failed: {str(error)[:200]}"
    finished = opened is None or opened > 0
    evidence = f"{what} done in {done.duration_s:.1f}s{accepted}"
    return finished and _received_mbps(report) > 0, evidence


@checker(ThroughputTest)
async def _throughput(ctx: CheckContext, test: ThroughputTest) -> Observed:
    params = test.params
    _server_of(ctx, params.target, params.server)

    async def measure() -> ExecResult:
        args = ["-t", str(params.seconds)]
        limit = params.seconds + 10
        return await _iperf(ctx, test.device, params.server, params.target, args, limit)

    done, opened = await _watched(ctx, params.server, "Tcp.PassiveOpens", measure)
    report = _report(done)
    what = f"iperf3 {test.device} -> {params.target} ({params.seconds}s)"
    if report is None:
        raise CheckUnavailable(f"{what} gave no report: {done.stderr.strip()[:200]}")
    if error := report.get("error"):
        return False, f"{what} failed: {str(error)[:200]}"
    mbps = _received_mbps(report)
    evidence = f"{what}: {mbps:.1f} Mbit/s received (at least {params.min_mbps:g} wanted)"
    evidence += _accepted(params.server, opened)
    return mbps >= params.min_mbps and (opened is None or opened > 0), evidence


@checker(LatencyTest)
async def _latency(ctx: CheckContext, test: LatencyTest) -> Observed:
    params = test.params
    interval = str(LATENCY_INTERVAL_S)
    argv = ["ping", "-c", str(params.count), "-i", interval, "-W", "1", "-q", params.target]

    async def ping() -> ExecResult:
        limit = params.count * LATENCY_INTERVAL_S * 3 + 10
        return await ctx.lab.exec_entered(test.device, argv, timeout=limit)

    if ctx.owners is None:
        done, answered = await ping(), None
    else:
        done, answered = await _watched(ctx, ctx.owner(params.target), "Icmp.OutEchoReps", ping)
    ran(done, "ping")
    parsed = parse_ping(test.device, params.target, done.stdout)
    if not parsed.transmitted:
        raise CheckUnavailable(f"ping from {test.device} printed no summary")
    sent, received, loss = parsed.transmitted, parsed.received, parsed.loss_percent
    rtt = parsed.rtt_avg_ms if parsed.rtt_avg_ms is not None else float("inf")
    evidence = (
        f"{test.device} -> {params.target}: {received}/{sent} answered ({loss:.1f}% lost, at most "
        f"{params.max_loss_percent:g}% allowed), average rtt {rtt:.2f} ms (at most "
        f"{params.max_rtt_ms:g} ms allowed)"
    )
    witnessed = answered is None or 0 < received <= answered
    if answered is not None and received > answered:
        evidence += f"; {received - answered} replies did not come from the target's owner"
    holds = loss <= params.max_loss_percent and rtt <= params.max_rtt_ms and witnessed
    return holds, evidence


@checker(IpRuleTest)
async def _ip_rule(ctx: CheckContext, test: IpRuleTest) -> Observed:
    done = ran(await ctx.lab.exec_entered(test.device, ["ip", "-j", "rule", "show"]), "ip rule")
    try:
        rules = json.loads(done.stdout) if done.ok else None
    except json.JSONDecodeError:
        rules = None
    if not isinstance(rules, list):
        raise CheckUnavailable(f"{test.device}: `ip -j rule show` gave no rules")
    found = [r for r in rules if r.get("priority") == test.params.priority]
    shown = ", ".join(f"to {r.get('dst', 'all')} from {r.get('src', 'all')} "
                      f"{r.get('table') or r.get('action', '?')}" for r in found)  # fmt: skip
    state = f"has {shown}" if found else "has none"
    return bool(found), f"{test.device}: rule at priority {test.params.priority} {state}"
