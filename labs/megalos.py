"""What keeps a `LabSpec` off Kathará's Kubernetes manager (Megalos), as Kathará 3.8.3 and the
Megalos CNI build a lab on a cluster. Pure: nothing here talks to a cluster.

Each constant names where the constraint comes from; docs/many-machines.md explains them. What
holds for every lab alike (pods always privileged, no pids limit, the image pulled by each node)
is a property of the engine, not of a spec, and is documented rather than checked.
"""

from __future__ import annotations

import io
import re
import tarfile
from collections import defaultdict

from netdojo.labs.spec import DeviceSpec, LabSpec

KATHARA_VERSION = "3.8.3"
"""The Kathará release whose Kubernetes manager these constraints are read from; a test fails
when another is installed, so they are read again."""

LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_VALUE_MAX = 63
"""A Kubernetes label value. Kathará labels each pod and each NetworkAttachmentDefinition
``name=<device or link name>`` (`KubernetesMachine._build_definition`,
`KubernetesLink._build_definition`), so both names must be label values."""

VXLAN_NAME_CHARS = 5
"""The Megalos CNI names a link's VXLAN device after the first five characters of its name,
lower-cased with every ``_`` dropped, then ``-`` and six characters of the lab's hash
(``getVxlanAndBridgeName`` in megalos-cni/src/vxlan_utils.go). Two links of one lab with the
same five characters get one device name with two VXLAN ids: the second fails on any node
that holds a pod of each."""

CLUSTER_INTERFACE = "eth0"
"""A pod's own interface on the cluster network; lab interface N is ``net<N>``
(``"interface": "net%d" % idx`` in `KubernetesMachine._build_definition`)."""

CONFIGMAP_MAX_BYTES = 1024 * 1024
"""What the API server lets a ConfigMap's values total (``ValidateConfigMap``:
``core.MaxSecretSize``). Kathará stores a device's packed folder there in base64."""

KATHARA_PACK_MAX_BYTES = 3145728
"""Kathará's own cap on a packed device folder (`KubernetesConfigMap.MAX_FILE_SIZE`), looser
than the API server's once base64 is counted."""

CONFIGMAP_MOUNT = "/tmp/kathara/"
"""Where the ConfigMap is mounted in the device, read-only: no device file may go there."""

_INTERFACE_REF = re.compile(r"\beth\d+\b")
_TAR_HEADER = 512


def vxlan_stem(link: str) -> str:
    """The part of a link's name the Megalos CNI keeps in its VXLAN device's name."""
    return link.lower().replace("_", "")[:VXLAN_NAME_CHARS]


def packed_size(device: DeviceSpec) -> int:
    """Bytes of the gzipped tar Kathará uploads for ``device``: its files under
    ``hostlab/<device>/`` and its startup file (`Machine.pack_data`, gzip level 9)."""
    members = {f"hostlab/{device.name}{path}": text for path, text in device.files.items()}
    members[f"hostlab/{device.name}.startup"] = "\n".join(device.startup) + "\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=9) as tar:
        for name, text in sorted(members.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return len(buffer.getvalue())


def base64_size(size: int) -> int:
    return 4 * -(-size // 3)


def megalos_problems(spec: LabSpec) -> list[str]:
    """Every way ``spec`` breaks a constraint of Kathará's Kubernetes manager, one line each;
    empty when it breaks none. What the engine lacks for every lab is not listed here."""
    problems = [*_name_problems(spec), *_vxlan_problems(spec)]
    linked = {device for link in spec.links for device, _ in link.endpoints}
    for device in spec.devices:
        if device.name in linked:  # a device with no link has no interface to rename
            problems.extend(_interface_problems(device))
        problems.extend(_file_problems(device))
        problems.extend(_option_problems(device))
    if spec.kubernetes is not None:
        problems.append(
            "kubernetes workload: the lab's own control plane (API server, node agent, policy "
            "enforcer) runs on the host beside the lab; Kathará's Kubernetes manager has no "
            "place for it"
        )
    return problems


def _name_problems(spec: LabSpec) -> list[str]:
    named = [("device", d.name) for d in spec.devices] + [("link", k.name) for k in spec.links]
    return [
        f"{kind} name: {name!r} is not a Kubernetes label value (at most {LABEL_VALUE_MAX} "
        "characters, starting and ending with a letter or a digit)"
        for kind, name in named
        if len(name) > LABEL_VALUE_MAX or not LABEL_VALUE.match(name)
    ]


def _vxlan_problems(spec: LabSpec) -> list[str]:
    by_stem: dict[str, list[str]] = defaultdict(list)
    for link in spec.links:
        by_stem[vxlan_stem(link.name)].append(link.name)
    return [
        f"link name: {', '.join(repr(n) for n in names)} share the VXLAN device name "
        f"{stem!r} (the first {VXLAN_NAME_CHARS} characters without '_'); they fail on a "
        "node that holds a pod of each"
        for stem, names in by_stem.items()
        if len(names) > 1
    ]


def _interface_problems(device: DeviceSpec) -> list[str]:
    found: dict[str, set[str]] = defaultdict(set)
    for line in device.startup:
        for name in _INTERFACE_REF.findall(line):
            found[name].add("startup")
    for path, text in device.files.items():
        for name in _INTERFACE_REF.findall(text):
            found[name].add(path)
    for key in device.sysctls:
        for name in _INTERFACE_REF.findall(key):
            found[name].add("sysctls")
    if not found:
        return []
    names = sorted(found, key=lambda n: int(n[3:]))
    where = sorted({place for places in found.values() for place in places})
    return [
        f"interface names: device {device.name!r} names {', '.join(names)} (in "
        f"{', '.join(where)}); on the cluster lab interface N is net<N>, and "
        f"{CLUSTER_INTERFACE} is the pod's cluster interface"
    ]


def _file_problems(device: DeviceSpec) -> list[str]:
    out = [
        f"device files: {device.name!r} writes {path}, under {CONFIGMAP_MOUNT}, where the "
        "device's ConfigMap is mounted read-only"
        for path in sorted(device.files)
        if path.startswith(CONFIGMAP_MOUNT)
    ]
    if _raw_size(device) <= CONFIGMAP_MAX_BYTES // 2:
        return out
    size = packed_size(device)
    if base64_size(size) > CONFIGMAP_MAX_BYTES or size > KATHARA_PACK_MAX_BYTES:
        out.append(
            f"device files: {device.name!r} packs to {size} bytes, {base64_size(size)} in "
            f"base64, over the {CONFIGMAP_MAX_BYTES} bytes a ConfigMap may hold"
        )
    return out


def _raw_size(device: DeviceSpec) -> int:
    """The bytes of a device's files with a header and padding each: a quarter of a MiB short
    of the packed limit, folders, the archive's end and gzip's own bytes cannot make up the
    difference, so a device this small is not packed to be measured."""
    texts = [*device.files.values(), "\n".join(device.startup)]
    return sum(len(t.encode()) + 2 * _TAR_HEADER for t in texts)


def _option_problems(device: DeviceSpec) -> list[str]:
    out = []
    if device.ulimits:
        out.append(
            f"unsupported option: {device.name!r} sets ulimits "
            f"({', '.join(sorted(device.ulimits))}), which Kathará drops on Kubernetes"
        )
    if device.ports:
        out.append(
            f"unsupported option: {device.name!r} has host ports; netdojo relays them from the "
            "host into the device's network namespace, which a pod on another node is not in"
        )
    return out
