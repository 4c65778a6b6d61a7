"""Load a Kathará lab folder (``lab.conf``, ``lab.dep``, ``*.startup``, device folders).

The ``lab.conf`` grammar is that of Kathará 3.8 (`netdojo.labs.labconf`), so a folder Kathará
accepts parses here too. What netdojo cannot honour is a problem, raised together with every
other problem as one `LabSpecError`; what is merely skipped is a warning of the `LabFolder`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from netdojo.labs.errors import LabSpecError
from netdojo.labs.labconf import (
    NO_EXTERNAL,
    ConfDevice,
    LabConf,
    Notes,
    parse_lab_conf,
    parse_lab_dep,
)
from netdojo.labs.names import slug
from netdojo.labs.spec import DEFAULT_IMAGE, LabSpec

_MAX_NAME_LENGTH = 30  # NAME_PATTERN: a letter, then up to 29 more characters
_KATHARA_IMAGES = {"kathara/base", "kathara/frr", "kathara/quagga"}
_ROUTING_SUITES = ("frr", "quagga")
_NOT_DEVICE_FOLDERS = {"shared", "_test"}  # Kathará's reserved names


class LabFolder(BaseModel):
    """A lab folder as loaded: the spec, what lab.conf says about the lab, and what was skipped."""

    spec: LabSpec
    title: str = Field(description="LAB_NAME, else the folder's name, as written")
    about: dict[str, str] = Field(
        default_factory=dict, description="description, version, author, email, web"
    )
    warnings: list[str] = Field(default_factory=list, description="one line each")


def load_lab_folder(path: str | Path) -> LabFolder:
    """Load the Kathará lab folder at ``path``; `LabSpecError` lists every problem."""
    root = Path(path)
    notes = Notes()
    conf = _read_lab_conf(root, notes)
    _check_entries(root, conf.devices, notes)
    needs = _read_lab_dep(root, conf.devices, notes)
    shared_files = _folder_files(root / "shared", "/shared/", notes)
    shared_startup = _startup_lines(root / "shared.startup", notes)
    devices = [
        _device_data(root, name, device, needs.get(name, []), shared_files, shared_startup, notes)
        for name, device in conf.devices.items()
    ]
    title = conf.name or root.resolve().name
    data: dict[str, object] = {
        "name": _spec_name(title),
        "devices": devices,
        "links": _links(conf.devices),
    }
    spec = _build(data, notes.problems)
    return LabFolder(spec=spec, title=title, about=conf.about, warnings=notes.warnings)


def collision_domain_names(domains: Iterable[str]) -> dict[str, str]:
    """Map Kathará collision-domain names to distinct link names that match ``NAME_PATTERN``.

    Names are assigned in sorted order, so the mapping does not depend on ``lab.conf`` line order.
    """
    mapping: dict[str, str] = {}
    for domain in sorted(set(domains)):
        base = name = _sanitise(domain, "cd-")
        count = 1
        while name in mapping.values():
            count += 1
            suffix = f"-{count}"
            name = base[: _MAX_NAME_LENGTH - len(suffix)] + suffix
        mapping[domain] = name
    return mapping


def _spec_name(title: str) -> str:
    """Whole words of the title, starting with a letter as ``NAME_PATTERN`` asks."""
    name = slug(title, _MAX_NAME_LENGTH)
    return name if re.match(r"[a-z]", name) else slug(f"lab {title}", _MAX_NAME_LENGTH)


def _sanitise(name: str, prefix: str) -> str:
    name = re.sub(r"[^a-z0-9_-]", "-", name.lower())
    if not re.match(r"[a-z]", name):
        name = prefix + name
    return name[:_MAX_NAME_LENGTH]


def _read_text(path: Path) -> str | None:
    """UTF-8 text without BOM and Windows line ends (as Kathará copies it); None if binary."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


def _read_lab_conf(root: Path, notes: Notes) -> LabConf:
    conf_path = root / "lab.conf"
    if not conf_path.is_file():
        raise LabSpecError([f"{root}: no lab.conf, so this is not a Kathará lab folder"])
    text = _read_text(conf_path)
    if text is None:
        raise LabSpecError(["lab.conf is not UTF-8 text"])
    return parse_lab_conf(text, notes)


def _read_lab_dep(root: Path, devices: Iterable[str], notes: Notes) -> dict[str, list[str]]:
    path = root / "lab.dep"
    if not path.is_file():
        return {}
    text = _read_text(path)
    if text is None:
        notes.problems.append("lab.dep is not UTF-8 text")
        return {}
    needs = parse_lab_dep(text, notes)
    known = set(devices)
    for device in sorted({*needs, *(n for names in needs.values() for n in names)} - known):
        notes.problems.append(f"lab.dep names {device!r}, which is no device of lab.conf")
    return {
        name: [n for n in names if n in known] for name, names in needs.items() if name in known
    }


def _check_entries(root: Path, devices: Iterable[str], notes: Notes) -> None:
    """Refuse startup files and folders of devices missing from lab.conf.

    Kathará silently ignores them, but they are nearly always a misspelt device whose
    configuration would otherwise vanish.
    """
    known = set(devices)
    for entry in sorted(root.iterdir()):
        name = entry.name
        if name.startswith("."):
            continue
        if entry.is_dir() and name not in known | _NOT_DEVICE_FOLDERS:
            notes.problems.append(f"folder {name}/ belongs to no device in lab.conf")
        elif entry.suffix == ".startup" and entry.stem not in known | {"shared"}:
            notes.problems.append(f"{name} belongs to no device in lab.conf")
        elif name == "lab.ext":
            notes.problems.append(
                f"lab.ext would attach collision domains to the host's interfaces; "
                f"{NO_EXTERNAL}: remove lab.ext to run the lab on its own"
            )
        elif entry.suffix == ".shutdown":
            notes.warnings.append(
                f"{name} ignored: netdojo removes devices without shutting them down"
            )


def _folder_files(folder: Path, target: str, notes: Notes) -> dict[str, str]:
    """Text files under ``folder``, keyed by their path in the device once copied to ``target``."""
    files: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        shown = path.relative_to(folder.parent).as_posix()
        if path.is_symlink():
            notes.warnings.append(f"{shown}: symbolic link skipped")
        elif path.is_file():
            text = _read_text(path)
            if text is None:
                notes.warnings.append(f"{shown}: skipped, not a UTF-8 text file")
            else:
                files[target + path.relative_to(folder).as_posix()] = text
    return files


def _startup_lines(path: Path, notes: Notes) -> list[str]:
    if not path.is_file():
        return []
    text = _read_text(path)
    if text is None:
        notes.problems.append(f"{path.name} is not UTF-8 text")
        return []
    lines = text.splitlines()
    return lines[1:] if lines and lines[0].startswith("#!") else lines


def _device_data(
    root: Path,
    name: str,
    device: ConfDevice,
    needs: list[str],
    shared_files: dict[str, str],
    shared_startup: list[str],
    notes: Notes,
) -> dict[str, object]:
    """The `DeviceSpec` fields of one device; Kathará runs shared, own startup, then exec lines."""
    image = str(device.options.get("image", ""))
    folder = root / name
    limits = {
        field_name: device.options[option]
        for option, field_name in (("mem", "memory_mib"), ("cpus", "cpus"))
        if option in device.options
    }
    return {
        "name": name,
        "role": _role(folder, image),
        "image": _image(image),
        "files": {**shared_files, **_folder_files(folder, "/", notes)},
        "startup": [
            *shared_startup,
            *_startup_lines(root / f"{name}.startup", notes),
            *device.exec_lines,
        ],
        "limits": limits,
        "ipv6": device.options.get("ipv6", False),
        "sysctls": device.sysctls,
        "env": device.env,
        "ulimits": device.ulimits,
        "ports": [
            {"host": host, "device": port, "protocol": protocol}
            for (host, protocol), port in device.ports.items()
        ],
        "macs": device.macs,
        "depends_on": needs,
    }


def _role(folder: Path, image: str) -> str:
    suite_folder = any((folder / "etc" / suite).is_dir() for suite in _ROUTING_SUITES)
    suite_image = any(suite in image.lower() for suite in _ROUTING_SUITES)
    return "router" if suite_folder or suite_image else "host"


def _image(image: str) -> str:
    """Kathará's stock images become netdojo's device image, which carries their tools."""
    untagged = re.sub(r":[\w.-]+$", "", image)
    return DEFAULT_IMAGE if not image or untagged in _KATHARA_IMAGES else image


def _links(devices: dict[str, ConfDevice]) -> list[dict[str, object]]:
    names = collision_domain_names(
        domain for device in devices.values() for domain in device.interfaces.values()
    )
    endpoints: dict[str, list[tuple[str, int]]] = {}
    for device_name, device in devices.items():
        for index, domain in sorted(device.interfaces.items()):
            endpoints.setdefault(domain, []).append((device_name, index))
    return [{"name": names[domain], "endpoints": ends} for domain, ends in endpoints.items()]


def _build(data: dict[str, object], problems: list[str]) -> LabSpec:
    """Raise the loader's problems together with whatever `LabSpec` itself rejects."""
    try:
        spec = LabSpec.build(**data)
    except LabSpecError as exc:
        raise LabSpecError([*problems, *exc.problems]) from None
    if problems:
        raise LabSpecError(problems)
    return spec
