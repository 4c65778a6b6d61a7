"""Each pod of a workload as a lab device: a host on the pods' network at its planned address,
a route to the service range on that network, and a listener on each of its container ports
(TCP and UDP) that answers with the pod's name, so a probe can tell who answered."""

from __future__ import annotations

import ipaddress

from netdojo.labs.k8s.control_plane import SERVICE_CIDR
from netdojo.labs.k8s.workload import Workload
from netdojo.labs.spec import DeviceSpec, LabSpec, LinkSpec

POD_LINK = "pods"
LISTENER_PATH = "/opt/netdojo/pod_listener.py"
LISTENER = """import selectors, socket, sys

selector = selectors.DefaultSelector()
name = sys.argv[1].encode()
for spec in sys.argv[2:]:
    protocol, port = spec.split("/")
    if protocol == "TCP":
        server = socket.create_server(("", int(port)), reuse_port=True)
    else:
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        server.bind(("", int(port)))
    server.setblocking(False)
    selector.register(server, selectors.EVENT_READ, protocol)
while True:
    for key, _ in selector.select():
        if key.data == "TCP":
            connection, _ = key.fileobj.accept()
            try:
                connection.send(name + b"\\n")
            except OSError:
                pass
            connection.close()
        else:
            try:
                _, peer = key.fileobj.recvfrom(2048)
                key.fileobj.sendto(name + b"\\n", peer)
            except OSError:
                pass
"""
"""Answers every connection and datagram with the pod's name, so a probe can tell who answered."""


def pod_devices(workload: Workload) -> list[DeviceSpec]:
    prefix = ipaddress.ip_network(workload.subnet).prefixlen
    devices = []
    for pod in workload.pods:
        ports = " ".join(f"{port.protocol}/{port.port}" for port in pod.ports)
        startup = [
            f"ip address add {pod.ip}/{prefix} dev eth0",
            f"ip route add {SERVICE_CIDR} dev eth0",
        ]
        if ports:
            startup.append(
                f"setsid nohup python3 {LISTENER_PATH} {pod.name} {ports} "
                ">/dev/null 2>&1 </dev/null &"
            )
        devices.append(
            DeviceSpec(
                name=pod.device,
                role="host",
                files={LISTENER_PATH: LISTENER} if ports else {},
                startup=startup,
            )
        )
    return devices


def pod_lab(workload: Workload, name: str) -> LabSpec:
    """The lab of a workload: its pods on one network, and the workload, which `start_lab`
    makes real on a control plane of the lab's own."""
    link = LinkSpec(name=POD_LINK, endpoints=[(pod.device, 0) for pod in workload.pods])
    return LabSpec(name=name, devices=pod_devices(workload), links=[link], kubernetes=workload)
