"""Build the device image with debootstrap from the machine's own Debian mirror.

The image is tagged with a hash of its recipe (suite, packages, added files), so it is
rebuilt only when the recipe changes.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from docker.errors import ImageNotFound

from netdojo.labs.apt import apt_install
from netdojo.labs.engine import client
from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.paths import sub_dir

IMAGE_REPOSITORY = "netdojo/device"
SUITE = "bookworm"
PACKAGES = (
    "frr",
    "iproute2",
    "iputils-ping",
    "traceroute",
    "tcpdump",
    "iptables",
    "nftables",
    "procps",
    "net-tools",
    "netcat-openbsd",
    "python3",
    "python3-scapy",
    "python3-networkx",
    "iperf3",
    "dnsmasq-base",
    "isc-dhcp-client",
    "bind9-dnsutils",
    "conntrack",
    "radvd",
    "ndisc6",
)
PATH_ENV = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FILES_DIR = Path(__file__).parent / "files"
ADDED_FILES = {"systemctl": "/usr/local/bin/systemctl", "service": "/usr/local/sbin/service"}
# Bytes not needed in a device; removing them halves the image.
PRUNED = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "var/cache/apt/archives",
)
RECIPE_VERSION = "1"

Progress = Callable[[str], None]


def recipe_hash() -> str:
    digest = hashlib.sha256()
    digest.update(f"{RECIPE_VERSION}\n{SUITE}\n{' '.join(sorted(PACKAGES))}\n{PATH_ENV}\n".encode())
    for name in sorted(ADDED_FILES):
        digest.update(name.encode() + b"\0" + (FILES_DIR / name).read_bytes())
    return digest.hexdigest()[:12]


def device_image() -> str:
    """The full tag of the device image this recipe builds."""
    return f"{IMAGE_REPOSITORY}:{recipe_hash()}"


def device_image_id() -> str | None:
    """The id of the built device image, or None when it has not been built."""
    try:
        return str(client(timeout=30).images.get(device_image()).id)
    except ImageNotFound:
        return None


def debian_mirror() -> str:
    """The first Debian mirror listed in the machine's apt sources."""
    candidates: list[str] = []
    sources = sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    for path in sources:
        candidates += re.findall(r"^URIs:\s*(\S+)", path.read_text(), flags=re.MULTILINE)
    lists = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]
    for path in lists:
        if path.exists():
            candidates += re.findall(
                r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)", path.read_text(), re.MULTILINE
            )
    for uri in candidates:
        if uri.rstrip("/").endswith("/debian"):
            return uri
    raise PrerequisiteError("no Debian mirror found in /etc/apt/sources.list or sources.list.d")


def build_image(progress: Progress = lambda _msg: None) -> str:
    """Build and tag the device image; returns its tag."""
    if shutil.which("debootstrap") is None:
        progress(apt_install("debootstrap"))
    tag = device_image()
    work = Path(tempfile.mkdtemp(prefix="image-", dir=sub_dir("build")))
    rootfs = work / "rootfs"
    try:
        mirror = debian_mirror()
        progress(f"debootstrap {SUITE} from {mirror}")
        argv = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            SUITE,
            str(rootfs),
            mirror,
        ]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = rootfs / "debootstrap" / "debootstrap.log"
            detail = (
                log.read_text(errors="replace")[-2000:] if log.exists() else done.stderr[-2000:]
            )
            raise PrerequisiteError(f"debootstrap failed:\n{detail}")
        _customise(rootfs)
        progress(f"importing {tag}")
        _import(rootfs, work / "rootfs.tar", tag)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tag


def _customise(rootfs: Path) -> None:
    for rel in PRUNED:
        target = rootfs / rel
        if target.is_dir():
            shutil.rmtree(target)
            target.mkdir()
    for name, dest in ADDED_FILES.items():
        path = rootfs / dest.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FILES_DIR / name, path)
        path.chmod(0o755)
    daemons = rootfs / "etc/frr/daemons"
    text = daemons.read_text()
    if "\nMAX_FDS=" not in text:
        daemons.write_text(text + "\nMAX_FDS=1024\n")
    (rootfs / "etc/hostname").write_text("device\n")


def _import(rootfs: Path, tarball: Path, tag: str) -> None:
    subprocess.run(["tar", "-C", str(rootfs), "-cf", str(tarball), "."], check=True)
    repository, _, version = tag.partition(":")
    changes = ['CMD ["/bin/bash"]', f"ENV PATH={PATH_ENV}", "LABEL app=netdojo"]
    api = client(timeout=600).api
    with tarball.open("rb") as stream:
        api.import_image(src=stream, repository=repository, tag=version, changes=changes)
    api.tag(tag, repository, "latest")
