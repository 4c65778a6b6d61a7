"""An independent NetworkPolicy oracle: IBM's network-config-analyzer (NCA) 2.1.0 from PyPI, in a
virtualenv of its own (it pins old dependencies), asked for the connectivity of each scenario.

NCA models pods without addresses: an ipBlock never matches a pod, only addresses outside the
cluster. Our labs translate no address, so an ipBlock does match the pods whose IP it covers. To
let NCA decide those cases too, each scenario is analysed as two views, each with the other
direction opened (every policy that isolates it gets the rule ``[{}]``, which allows everything):

- the ingress view: NCA's answer for pod A -> pod B is what B's ingress rules allow A by
  selectors; its answer for address ip(A) -> pod B is what they allow that address by ipBlocks
  (or rules without peers);
- the egress view: likewise A -> B and A -> ip(B) for A's egress rules.

A rule allows a flow when one of its peers matches and one of its ports does, so a direction
allows A -> B exactly when the selector answer or the address answer does; the flow is allowed
when both directions do. The views change no field that NCA's semantics of the tested direction
reads, and no defaulting: ``policyTypes`` is left as written (only sorted, see `nca_view`).

A named port in an egress rule is resolved against the destination pod; NCA cannot resolve it
against a bare address, so a generator must not put named ports in egress rules with ipBlock
peers (the selector side still covers named ports in rules without peers).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from ipaddress import IPv4Address, ip_address, ip_network
from pathlib import Path
from typing import Any

from netdojo.labs.k8s.netpol.evaluate import Flow

NCA_VERSION = "2.1.0"
NCA_HOME = Path.home() / ".cache" / "netdojo" / f"nca-{NCA_VERSION}"
_READY = NCA_HOME / ".installed"
_DRIVER = """
import json, sys
from nca.nca_cli import nca_main
jobs = json.load(open(sys.argv[1]))
json.dump([nca_main(argv) for argv in jobs], open(sys.argv[2], "w"))
"""
Admits = Callable[[str, int], bool]
PORT_PROTOCOLS = ("TCP", "UDP", "SCTP")


class OracleError(Exception):
    """NCA could not be installed or did not run a query."""


def nca_python() -> Path:
    """The analyser's interpreter, installing it on first use."""
    python = NCA_HOME / "bin" / "python"
    if _READY.exists():
        return python
    shutil.rmtree(NCA_HOME, ignore_errors=True)
    NCA_HOME.parent.mkdir(parents=True, exist_ok=True)
    for argv in (
        [sys.executable, "-m", "venv", str(NCA_HOME)],
        [str(python), "-m", "pip", "install", "-q", f"network-config-analyzer=={NCA_VERSION}"],
    ):
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise OracleError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
    _READY.touch()
    return python


def nca_view(manifests: Iterable[Mapping[str, Any]], direction: str) -> list[dict[str, Any]]:
    """The manifests with the direction other than ``direction`` opened on every policy.

    ``policyTypes`` is put in the order ``[Ingress, Egress]``: NCA refuses any other order
    ("policyTypes has invalid value in spec"), while the API server reads the list as a set (the
    documentation's own allow-egress-deny-ingress example writes ``[Egress, Ingress]``)."""
    other, field = ("Egress", "egress") if direction == "Ingress" else ("Ingress", "ingress")
    out = []
    for item in _items(manifests):
        manifest = copy.deepcopy(dict(item))
        if manifest.get("kind") == "NetworkPolicy":
            spec = manifest.setdefault("spec", {})
            types = spec.get("policyTypes")
            if types:
                spec["policyTypes"] = [t for t in ("Ingress", "Egress") if t in types]
            if not types or other in types:
                spec[field] = [{}]
        out.append(manifest)
    return out


def run_nca(
    scenarios: Mapping[str, list[dict[str, Any]]], workdir: Path, workers: int = 2
) -> dict[str, str]:
    """Run NCA's connectivity query on every scenario's two views, in ``workers`` processes that
    each run their share of the queries one after another; returns the text output per
    ``<scenario>/<view>``."""
    jobs, outputs = [], {}
    for name, manifests in scenarios.items():
        for view in ("Ingress", "Egress"):
            folder = workdir / name / view.lower()
            folder.mkdir(parents=True)
            resources = folder / "resources.json"
            items = nca_view(manifests, view)
            resources.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
            out = folder / "connectivity.txt"
            argv = ["--connectivity", "-r", str(resources), "-o", "txt_no_fw_rules"]
            jobs.append([*argv, "--output_endpoints", "pods", "-f", str(out)])
            outputs[f"{name}/{view.lower()}"] = out
    python = nca_python()
    shares = [jobs[i::workers] for i in range(workers)]
    running = []
    for index, share in enumerate(shares):
        (workdir / f"jobs{index}.json").write_text(json.dumps(share))
        argv = [str(python), "-c", _DRIVER, f"jobs{index}.json", f"codes{index}.json"]
        with open(workdir / f"log{index}.txt", "w") as log:
            running.append(subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=log))
    for index, (process, share) in enumerate(zip(running, shares, strict=True)):
        process.wait()
        log_tail = (workdir / f"log{index}.txt").read_text()[-3000:]
        if process.returncode != 0:
            raise OracleError(f"NCA driver failed:\n{log_tail}")
        codes = json.loads((workdir / f"codes{index}.json").read_text())
        for argv, code in zip(share, codes, strict=True):
            if code >= 4:
                raise OracleError(f"NCA did not run {argv} (exit {code}):\n{log_tail}")
    return {key: path.read_text() for key, path in outputs.items()}


def parse_connections(text: str) -> Admits:
    """NCA's text for a set of connections, as a test on (protocol, port)."""
    text = text.strip()
    if text == "All connections":
        return lambda protocol, port: True
    if text.startswith("All but "):
        rest = parse_connections(text.removeprefix("All but "))
        return lambda protocol, port: not rest(protocol, port)
    cubes = [_cube(body) for body in re.findall(r"\{([^}]*)\}", text)]
    if not cubes:
        raise OracleError(f"unreadable connections: {text!r}")
    return lambda protocol, port: any(cube(protocol, port) for cube in cubes)


def _cube(body: str) -> Admits:
    fields = dict(item.split(":", 1) for item in re.split(r",(?=[a-z_]+:)", body))
    if set(fields) - {"protocols", "dst_ports"}:
        raise OracleError(f"unexpected dimensions in {body!r}")
    protocols = _protocols(fields.get("protocols", "*"))
    ranges = (
        [_span(item) for item in fields["dst_ports"].split(",")] if "dst_ports" in fields else []
    )
    return lambda protocol, port: (
        protocol in protocols and (not ranges or any(low <= port <= high for low, high in ranges))
    )


def _protocols(text: str) -> set[str]:
    if text == "*":
        return set(PORT_PROTOCOLS)
    if text.startswith("all but "):
        return set(PORT_PROTOCOLS) - set(text.removeprefix("all but ").split(", "))
    return set(text.split(", "))


def _span(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


class Connectivity:
    """One view's answers: pod to pod, address to pod and pod to address. A pair can have
    several lines (one per distinct set of connections NCA grouped it in): they add up."""

    def __init__(self, text: str, pods: set[str]) -> None:
        self.pairs: dict[tuple[str, str], list[Admits]] = {}
        self.blocks: list[tuple[str, str, list[tuple[int, int]], Admits]] = []
        for line in text.splitlines():
            if " => " not in line:
                continue
            src, rest = line.split(" => ", 1)
            dst, conns = rest.split(" : ", 1)
            admits = parse_connections(conns)
            if src in pods and dst in pods:
                self.pairs.setdefault((src, dst), []).append(admits)
            elif dst in pods:
                self.blocks.append(("from", dst, _addresses(src), admits))
            elif src in pods:
                self.blocks.append(("to", src, _addresses(dst), admits))

    def pod(self, src: str, dst: str, protocol: str, port: int) -> bool:
        return any(admits(protocol, port) for admits in self.pairs.get((src, dst), []))

    def address(self, side: str, pod: str, ip: IPv4Address, protocol: str, port: int) -> bool:
        """``side`` "from": ip -> pod; "to": pod -> ip."""
        value = int(ip)
        return any(
            admits(protocol, port)
            for where, peer, spans, admits in self.blocks
            if where == side and peer == pod and any(lo <= value <= hi for lo, hi in spans)
        )


def _addresses(text: str) -> list[tuple[int, int]]:
    spans = []
    for item in text.split(","):
        if "-" in item:
            low, high = item.split("-")
            spans.append((int(IPv4Address(low)), int(IPv4Address(high))))
        else:
            network = ip_network(item, strict=False)
            spans.append((int(network[0]), int(network[-1])))
    return spans


def oracle_matrix(
    manifests: Iterable[Mapping[str, Any]], ingress: str, egress: str
) -> dict[Flow, bool]:
    """NCA's answer for every pair of distinct pods on each port the destination declares."""
    pods = _pods(manifests)
    views = {
        "in": Connectivity(ingress, set(pods)),
        "eg": Connectivity(egress, set(pods)),
    }
    answers = {}
    for src, (src_ip, _) in pods.items():
        for dst, (dst_ip, listeners) in pods.items():
            if src == dst:
                continue
            for protocol, port in listeners:
                into = views["in"].pod(src, dst, protocol, port) or views["in"].address(
                    "from", dst, src_ip, protocol, port
                )
                out = views["eg"].pod(src, dst, protocol, port) or views["eg"].address(
                    "to", src, dst_ip, protocol, port
                )
                answers[Flow(src, dst, protocol, port)] = into and out
    return answers


def _pods(manifests: Iterable[Mapping[str, Any]]) -> dict[str, tuple[IPv4Address, list]]:
    """Each pod's ``namespace/name``, address and declared (protocol, port)s, read from the
    manifests directly."""
    pods = {}
    for item in _items(manifests):
        if item.get("kind") != "Pod":
            continue
        meta = item["metadata"]
        key = f"{meta.get('namespace', 'default')}/{meta['name']}"
        ports = [
            (port.get("protocol", "TCP"), port["containerPort"])
            for container in item["spec"]["containers"]
            for port in container.get("ports") or []
        ]
        address = ip_address(item["status"]["podIP"])
        assert isinstance(address, IPv4Address)
        pods[key] = (address, list(dict.fromkeys(ports)))
    return pods


def _items(manifests: Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    for manifest in manifests:
        if str(manifest.get("kind", "")).endswith("List"):
            yield from _items(manifest.get("items") or [])
        else:
            yield manifest
