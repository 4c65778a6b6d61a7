"""A `LabSpec` as Kathará's in-memory `Lab`: images, limits, sysctls, files, startup, links."""

from __future__ import annotations

from collections import Counter
from typing import Any

from docker.errors import NotFound

from netdojo.labs.image import device_image
from netdojo.labs.kathara_backend import docker_client
from netdojo.labs.spec import DEFAULT_IMAGE, LabSpec, start_order

OFFICIAL_IMAGES = ("kathara/frr", "kathara/base", "kathara/quagga")
LOCAL_RESOLVER = "printf 'nameserver 127.0.0.1\\n' > /etc/resolv.conf"
"""First startup line of every device. Docker points a device at its embedded resolver, which
forwards unknown names to the host's resolvers; a device resolves nothing outside itself."""


def resolve_image(image: str) -> str:
    """The image a device really runs: netdojo's device image unless an official one is present."""
    if image == DEFAULT_IMAGE:
        return device_image()
    if image.split(":")[0] in OFFICIAL_IMAGES:
        try:
            docker_client().images.get(image)
            return image
        except NotFound:
            return device_image()
    return image


def default_sysctls(interfaces: int) -> dict[str, int]:
    """Kernel settings every device gets.

    Linux lets a socket join 20 multicast groups by default; an OSPF router joins
    AllSPFRouters once per interface, so a hub with more links would lose adjacencies.
    """
    return {"net.ipv4.igmp_max_memberships": max(20, 4 * interfaces)}


def to_kathara(spec: LabSpec, name: str, files: bool = True) -> Any:
    """Build Kathará's in-memory `Lab` for ``spec`` under the unique ``name``.

    Without ``files``, devices get neither their files nor their startup file: netdojo's own
    deploy (`netdojo.labs.deploy`) delivers them.

    Device ports are not Kathará's to publish (it would need a bridge to the host):
    `netdojo.labs.ports` relays them. With dependencies, Kathará starts the devices one by
    one in ``start_order``, as it does for a lab.dep.
    """
    from Kathara.model.Lab import Lab

    lab = Lab(name)
    interfaces = Counter(device for link in spec.links for device, _ in link.endpoints)
    for dev in spec.devices:
        machine = lab.new_machine(
            dev.name,
            image=resolve_image(dev.image),
            mem=f"{dev.limits.memory_mib}m",
            cpus=dev.limits.cpus,
            ipv6=dev.ipv6,
        )
        for key, value in {**default_sysctls(interfaces[dev.name]), **dev.sysctls}.items():
            machine.add_meta("sysctl", f"{key}={value}")
        for key, text in dev.env.items():
            machine.add_meta("env", f"{key}={text}")
        for key, limit in dev.ulimits.items():
            machine.add_meta("ulimit", f"{key}={limit.soft}:{limit.hard}")
        if files:
            for path, content in dev.files.items():
                machine.create_file_from_string(content, path)
            lab.create_startup_file_from_list(machine, [LOCAL_RESOLVER, *dev.startup])
    for link in spec.links:
        for device, index in link.endpoints:
            lab.connect_machine_to_link(
                device,
                link.name,
                machine_iface_number=index,
                mac_address=spec.device(device).macs.get(index),
            )
    if any(dev.depends_on for dev in spec.devices):
        lab.apply_dependencies(start_order(spec))
    return lab
