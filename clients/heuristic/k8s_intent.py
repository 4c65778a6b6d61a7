"""The intended connectivity of a NetworkPolicy task, read from its brief.

A brief lists every call the application makes, one per line or grouped, in one of these forms
(pods by name, or ``namespace/name`` when there are several namespaces)::

    - every pod calls DST on 53/UDP         - all pods reach DST on 53/UDP
    - DST accepts 8080/TCP from SRC, SRC    - SRC, SRC -> DST on 8080/TCP
    - SRC calls DST (8080/TCP), DST (53/UDP)    - SRC -> DST (8080/TCP)

and says that nothing else may connect. The intent is then the whole matrix the judge decides:
every ordered pair of distinct pods with an address, on every port the destination declares,
allowed exactly when a listed call names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from netdojo.labs.k8s.netpol.evaluate import Flow
from netdojo.labs.k8s.objects import Pod

Intent = dict[Flow, bool]
Call = tuple[str, str, str, int]
"""(source pod name, destination pod name, protocol, port), names as the brief writes them."""

_PORT = r"(?P<port>\d+)/(?P<protocol>[A-Za-z]+)"
_EVERYONE = re.compile(rf"^(?:every pod calls|all pods reach) (?P<dst>\S+) on {_PORT}$")
_ACCEPTS = re.compile(rf"^(?P<dst>\S+) accepts {_PORT} from (?P<srcs>.+)$")
_INTO = re.compile(rf"^(?P<srcs>.+?) -> (?P<dst>\S+) on {_PORT}$")
_OUT = re.compile(r"^(?P<src>\S+) (?:calls|->) (?P<dsts>.+\))$")
_TARGET = re.compile(rf"^(?P<dst>\S+) \({_PORT}\)$")
EVERY = "*"
"""The source of a call every other pod makes."""


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def parse_calls(brief: str) -> list[Call]:
    """Every call a bulleted line of the brief states; other lines are left alone."""
    calls: list[Call] = []
    for raw in brief.splitlines():
        line = raw.strip()
        if not line.startswith(("- ", "* ")):
            continue
        calls += _line_calls(line[2:].strip().rstrip("."))
    return calls


def _line_calls(line: str) -> Iterator[Call]:
    if match := _EVERYONE.match(line):
        yield EVERY, match["dst"], match["protocol"].upper(), int(match["port"])
        return
    match = _ACCEPTS.match(line) or _INTO.match(line)
    if match:
        for src in _names(match["srcs"]):
            yield src, match["dst"], match["protocol"].upper(), int(match["port"])
        return
    if match := _OUT.match(line):
        for target in re.split(r"(?<=\)),\s*", match["dsts"]):
            found = _TARGET.match(target.strip())
            if found:
                yield match["src"], found["dst"], found["protocol"].upper(), int(found["port"])


class PodIndex:
    """The pods the matrix is over (those with an address), by name and by ``namespace/name``."""

    def __init__(self, pods: Iterable[Pod]) -> None:
        self.pods = sorted((pod for pod in pods if pod.ip is not None), key=lambda p: p.key)
        self.by_key = {pod.key: pod for pod in self.pods}
        names: dict[str, list[Pod]] = {}
        for pod in self.pods:
            names.setdefault(pod.name, []).append(pod)
        self.by_name = {name: found[0] for name, found in names.items() if len(found) == 1}

    def resolve(self, written: str) -> Pod | None:
        """The pod a brief names, qualified or not; None for a name no single pod has."""
        return self.by_key.get(written) or self.by_name.get(written)


def listeners(pod: Pod) -> list[tuple[str, int]]:
    """(protocol, port) of each port the pod declares, once each."""
    return list(dict.fromkeys((port.protocol, port.container_port) for port in pod.ports))


def intent_matrix(calls: Iterable[Call], index: PodIndex) -> tuple[Intent, list[str]]:
    """The intended verdict of every flow, and the calls that name no pod or port (unread)."""
    wanted: set[Flow] = set()
    unread: list[str] = []
    for src, dst, protocol, port in calls:
        target = index.resolve(dst)
        sources = (
            [pod for pod in index.pods if target is None or pod.key != target.key]
            if src == EVERY
            else [index.resolve(src)]
        )
        if target is None or None in sources or (protocol, port) not in listeners(target):
            unread.append(f"{src} -> {dst} {port}/{protocol}")
            continue
        wanted.update(
            Flow(pod.key, target.key, protocol, port)  # type: ignore[arg-type]
            for pod in sources
            if pod is not None
        )
    intent = {
        flow: flow in wanted
        for src in index.pods
        for dst in index.pods
        if src.key != dst.key
        for protocol, port in listeners(dst)
        for flow in (Flow(src.key, dst.key, protocol, port),)  # type: ignore[arg-type]
    }
    return intent, unread


def is_policy_task(brief: str, routers: int, links: Iterable[str]) -> bool:
    """A Kubernetes NetworkPolicy task: no router, and the brief speaks of network policies or
    the pods share the cluster's pod network."""
    if routers:
        return False
    return bool(re.search(r"network\s*polic", brief, re.IGNORECASE)) or "pods" in set(links)
