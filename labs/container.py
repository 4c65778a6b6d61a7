"""Whether this process runs inside a Docker container, and which one.

A netdojo process in a container (the green agent's image, with the host's Docker socket
mounted) drives the host's engine like any other, but it cannot see the host's processes,
enter a device's namespaces or touch the host's links and rules. Docker bind-mounts each
container's ``hostname``, ``hosts`` and ``resolv.conf`` from a folder named by the container's
id, so the container's own mount table names it; a ``/.dockerenv`` file alone proves nothing
(images built from a container's file system keep it).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
DOCKER_FILES = ("/etc/hostname", "/etc/hosts", "/etc/resolv.conf")
_CONTAINER_FOLDER = re.compile(r"/containers/([0-9a-f]{64})/")


def container_id_in(mountinfo: str) -> str | None:
    """The id of the container whose mount table ``mountinfo`` is, or None (not a container
    of a Docker engine)."""
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[4] in DOCKER_FILES:
            found = _CONTAINER_FOLDER.search(f"{fields[3]}/")
            if found:
                return found.group(1)
    return None


@functools.cache
def own_container() -> str | None:
    """The full id of the container this process runs in, or None on a host."""
    try:
        return container_id_in(MOUNTINFO.read_text())
    except OSError:
        return None
