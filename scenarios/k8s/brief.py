"""The briefs of the Kubernetes policy tasks, phrased many ways from the seed.

A brief states the application's intended connectivity in full (every call, and that nothing
else may connect) and the rules of the task; a repair brief never says which flows broke or
which policy is wrong, so reading it tells nothing of the faults: the agent must probe.
"""

from __future__ import annotations

import random
from collections import defaultdict

from netdojo.scenarios.k8s.app import App, Call

REPAIR_OPENINGS = (
    "The {what} in {where} runs under NetworkPolicies that no longer match what it needs.",
    "After a round of policy changes, connectivity inside the {what} ({where}) is wrong: some "
    "calls it needs fail, or some that must stay closed may connect.",
    "A ticket reports that the {what} in {where} misbehaves since its NetworkPolicies were "
    "last edited.",
    "The network policies of the {what} ({where}) were changed by mistake.",
)
REPAIR_ASKS = (
    "Find what is wrong and repair the policies so that connectivity is exactly as intended.",
    "Bring the policies back in line with the intent below.",
    "Restore the intended connectivity by fixing the NetworkPolicies.",
    "Repair the policy set; submit once the application's flows match the intent.",
)
BUILD_OPENINGS = (
    "The {what} in {where} runs without any NetworkPolicy: every pod can reach every other.",
    "Nothing restricts traffic between the pods of the {what} ({where}) yet.",
    "The {what} ({where}) has just been deployed with no network policies.",
)
BUILD_ASKS = (
    "Write NetworkPolicies so that exactly the flows below are allowed, least privilege: no "
    "other pod, port or protocol may connect.",
    "Lock it down with NetworkPolicies: allow the calls listed below and nothing else.",
    "Add the NetworkPolicies that allow the intended calls below, and deny every other flow "
    "between the pods.",
)
INTENT_HEADERS = (
    "Intended connectivity:",
    "The application needs these calls, and only these:",
    "What must work (everything else between the pods must stay blocked):",
    "Flows the application uses:",
)
CLOSINGS = (
    "Every flow between the pods that is not listed must be denied.",
    "Any other connection between these pods must fail.",
    "Nothing beyond the listed flows may connect.",
)
WHAT = ("application", "microservice application", "app", "service mesh of microservices")


def _pod(app: App, pod: str, qualify: bool) -> str:
    return f"{app.namespace(pod)}/{pod}" if qualify else pod


def _port(call: Call) -> str:
    return f"{call.port}/{call.protocol}"


def intent_lines(app: App, rng: random.Random) -> list[str]:
    """Every call of the application, grouped by destination or by source (drawn), pods
    qualified by namespace when there are several; a destination every other pod calls on a
    port is said once."""
    qualify = len(app.workload.namespaces) > 1
    others = len(app.pod_names) - 1
    by_dst: dict[tuple[str, str], list[str]] = defaultdict(list)
    for call in app.calls:
        by_dst[call.dst, _port(call)].append(call.src)
    everyone = {key for key, sources in by_dst.items() if len(set(sources)) == others}
    lines = [
        rng.choice(("every pod calls {dst} on {port}", "all pods reach {dst} on {port}")).format(
            dst=_pod(app, dst, qualify), port=port
        )
        for dst, port in sorted(everyone)
    ]
    rest = [call for call in app.calls if (call.dst, _port(call)) not in everyone]
    if rng.random() < 0.5:
        grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
        for call in rest:
            grouped[call.dst, _port(call)].append(_pod(app, call.src, qualify))
        form = rng.choice(("{dst} accepts {port} from {srcs}", "{srcs} -> {dst} on {port}"))
        lines += [
            form.format(dst=_pod(app, dst, qualify), port=port, srcs=", ".join(sorted(srcs)))
            for (dst, port), srcs in sorted(grouped.items())
        ]
    else:
        outgoing: dict[str, list[str]] = defaultdict(list)
        for call in rest:
            outgoing[call.src].append(f"{_pod(app, call.dst, qualify)} ({_port(call)})")
        form = rng.choice(("{src} calls {dsts}", "{src} -> {dsts}"))
        lines += [
            form.format(src=_pod(app, src, qualify), dsts=", ".join(sorted(dsts)))
            for src, dsts in sorted(outgoing.items())
        ]
    rng.shuffle(lines)
    return [f"- {line}" for line in lines]


def _where(app: App) -> str:
    names = list(app.workload.namespaces)
    if len(names) == 1:
        return f"namespace {names[0]}"
    return "namespaces " + ", ".join(names[:-1]) + f" and {names[-1]}"


def task_brief(app: App, rng: random.Random, repair: bool, rules: list[str]) -> str:
    """The brief, ending with the task's ``rules`` (its constraints)."""
    openings, asks = (REPAIR_OPENINGS, REPAIR_ASKS) if repair else (BUILD_OPENINGS, BUILD_ASKS)
    opening = rng.choice(openings).format(what=rng.choice(WHAT), where=_where(app))
    parts = [
        f"{opening} {rng.choice(asks)}",
        "\n".join([rng.choice(INTENT_HEADERS), *intent_lines(app, rng)]),
        rng.choice(CLOSINGS),
        " ".join(rules),
    ]
    return "\n\n".join(parts)


REPAIR_RULES = (
    "Change NetworkPolicies only, with kubectl; pods and namespaces are read-only.",
    "Only NetworkPolicy objects may change; do not touch pods or namespaces.",
)
KEEP_RULES = (
    "Correct policies in place; delete only a policy that has no place in the intent.",
    "Do not replace policies with new ones under other names; remove only a policy that "
    "should not exist at all.",
)
PRIVILEGE_RULES = (
    "No allow-all rules: nothing beyond the intended flows may connect.",
    "Least privilege: no rule may allow more than the intended flows.",
)


def task_constraints(rng: random.Random, repair: bool) -> list[str]:
    rules = [rng.choice(REPAIR_RULES), rng.choice(PRIVILEGE_RULES)]
    if repair:
        rules.insert(1, rng.choice(KEEP_RULES))
    return rules
