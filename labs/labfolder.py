"""Load a Kathará lab folder (``lab.conf``, ``*.startup``, device folders) into a `LabSpec`.

The ``lab.conf`` grammar is that of Kathará 3.8's ``LabParser``, so a folder Kathará accepts
parses here too. What netdojo cannot honour is a problem, raised together with every other problem
as one `LabSpecError`; what is merely dropped is reported as a `LabFolderWarning`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from netdojo.labs.errors import LabSpecError
from netdojo.labs.spec import DEFAULT_IMAGE, LabSpec

_DEVICE_LINE = re.compile(
    r"^(?P<device>\w+)\[(?P<key>\w+)\]=(?P<quote>[\"']?)(?P<value>[^\"']+)(?P=quote)(\s+#.*)?$"
)
_GENERAL_LINE = re.compile(r"^LAB_(?:NAME|DESCRIPTION|VERSION|AUTHOR|EMAIL|WEB)=")
_COLLISION_DOMAIN = re.compile(r"^\w+$")
_MAX_NAME_LENGTH = 30  # NAME_PATTERN: a letter, then up to 29 more characters
_KATHARA_IMAGES = {"kathara/base", "kathara/frr", "kathara/quagga"}
_ROUTING_SUITES = ("frr", "quagga")
_NOT_DEVICE_FOLDERS = {"shared", "_test"}  # Kathará's reserved names
_UNIT_BYTES = {"b": 1, "k": 2**10, "m": 2**20, "g": 2**30}
_TRUE = {"y", "yes", "t", "true", "on", "1"}
_FALSE = {"n", "no", "f", "false", "off", "0"}
_NO_EXTERNAL = "netdojo labs never reach off the machine"


class LabFolderWarning(UserWarning):
    """Something in a Kathará lab folder was skipped or ignored."""


def _memory_mib(value: str) -> int:
    """Kathará's ``mem`` (``128m``, ``1g``; a bare number is MiB) in whole MiB, rounded up."""
    unit = value[-1].lower()
    if unit not in _UNIT_BYTES:
        return int(value)
    return -(-int(value[:-1]) * _UNIT_BYTES[unit] // 2**20)


def _flag(value: str) -> bool:
    word = value.strip().lower()
    if word in _TRUE | _FALSE:
        return word in _TRUE
    raise ValueError(value)


_OPTIONS: dict[str, tuple[Callable[[str], object], str]] = {
    "image": (str, "an image name"),
    "mem": (_memory_mib, "a size such as 128m or 1g"),
    "cpus": (float, "a number of CPUs such as 0.5"),
    "ipv6": (_flag, "true or false"),
    "bridged": (_flag, "true or false"),
}


@dataclass
class _Notes:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Device:
    interfaces: dict[int, str] = field(default_factory=dict)  # index -> Kathará collision domain
    options: dict[str, object] = field(default_factory=dict)
    exec_lines: list[str] = field(default_factory=list)


@dataclass
class _LabConf:
    name: str | None = None
    devices: dict[str, _Device] = field(default_factory=dict)


def load_lab_folder(path: str | Path) -> LabSpec:
    """Load the Kathará lab folder at ``path``.

    Raises `LabSpecError` listing every problem; skipped files and ignored settings are
    emitted as `LabFolderWarning`.
    """
    root = Path(path)
    notes = _Notes()
    conf = _read_lab_conf(root, notes)
    _check_entries(root, conf.devices, notes)
    shared_files = _folder_files(root / "shared", "/shared/", notes)
    shared_startup = _startup_lines(root / "shared.startup", notes)
    devices = [
        _device_data(root, name, device, shared_files, shared_startup, notes)
        for name, device in conf.devices.items()
    ]
    data: dict[str, object] = {
        "name": _sanitise(conf.name or root.resolve().name, "lab-"),
        "devices": devices,
        "links": _links(conf.devices),
    }
    for message in notes.warnings:
        warnings.warn(message, LabFolderWarning, stacklevel=2)
    return _build(data, notes.problems)


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


def _read_lab_conf(root: Path, notes: _Notes) -> _LabConf:
    conf_path = root / "lab.conf"
    if not conf_path.is_file():
        raise LabSpecError([f"{root}: no lab.conf, so this is not a Kathará lab folder"])
    text = _read_text(conf_path)
    if text is None:
        raise LabSpecError(["lab.conf is not UTF-8 text"])
    return _parse_lab_conf(text, notes)


def _parse_lab_conf(text: str, notes: _Notes) -> _LabConf:
    conf = _LabConf()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        where = f"lab.conf line {number}"
        if not line or line.startswith("#"):
            continue
        if _GENERAL_LINE.match(line):
            key, _, value = line.partition("=")
            if key == "LAB_NAME":
                conf.name = value.replace('"', "").replace("'", "").strip()
            continue
        match = _DEVICE_LINE.match(line)
        if match is None:
            notes.problems.append(f"{where}: cannot parse {line!r}")
            continue
        name, key, value = match["device"], match["key"], match["value"]
        device = conf.devices.setdefault(name, _Device())
        if key.isdecimal():
            _add_interface(name, device, int(key), value, where, notes)
        elif key == "exec":
            device.exec_lines.append(value)
        elif key in _OPTIONS:
            _set_option(name, device, key, value, where, notes)
        else:
            notes.problems.append(f"{where}: option {key!r} of device {name!r} is not supported")
    return conf


def _add_interface(
    name: str, device: _Device, index: int, value: str, where: str, notes: _Notes
) -> None:
    """Handle ``device[N]=domain`` or ``device[N]=domain/MAC``."""
    domain, mac = value, ""
    if "/" in value:
        parts = [part for part in value.split("/") if part]
        if len(parts) != 2:
            notes.problems.append(f"{where}: {value!r} is not COLLISION_DOMAIN/MAC")
            return
        domain, mac = parts
    if not _COLLISION_DOMAIN.match(domain):
        notes.problems.append(
            f"{where}: collision domain {domain!r} may hold only letters, digits and '_'"
        )
    elif index in device.interfaces:
        notes.problems.append(
            f"{where}: eth{index} of {name!r} is already on collision domain "
            f"{device.interfaces[index]!r}"
        )
    else:
        device.interfaces[index] = domain
        if mac:
            notes.warnings.append(f"{where}: MAC address {mac!r} of {name!r} eth{index} ignored")


def _set_option(
    name: str, device: _Device, key: str, value: str, where: str, notes: _Notes
) -> None:
    convert, expected = _OPTIONS[key]
    try:
        converted = convert(value)
    except ValueError:
        notes.problems.append(f"{where}: {key} of {name!r} must be {expected}, not {value!r}")
        return
    if key == "bridged" and converted:
        notes.problems.append(
            f"{where}: device {name!r} is bridged to the host network; {_NO_EXTERNAL}"
        )
    if key in device.options:
        notes.warnings.append(f"{where}: {key} of {name!r} set again; the last value wins")
    device.options[key] = converted


def _check_entries(root: Path, devices: Iterable[str], notes: _Notes) -> None:
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
                f"lab.ext attaches collision domains to host interfaces; {_NO_EXTERNAL}"
            )
        elif name == "lab.dep" or entry.suffix == ".shutdown":
            notes.warnings.append(f"{name} ignored")


def _folder_files(folder: Path, target: str, notes: _Notes) -> dict[str, str]:
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


def _startup_lines(path: Path, notes: _Notes) -> list[str]:
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
    device: _Device,
    shared_files: dict[str, str],
    shared_startup: list[str],
    notes: _Notes,
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
    }


def _role(folder: Path, image: str) -> str:
    suite_folder = any((folder / "etc" / suite).is_dir() for suite in _ROUTING_SUITES)
    suite_image = any(suite in image.lower() for suite in _ROUTING_SUITES)
    return "router" if suite_folder or suite_image else "host"


def _image(image: str) -> str:
    """Kathará's stock images become netdojo's device image, which carries their tools."""
    untagged = re.sub(r":[\w.-]+$", "", image)
    return DEFAULT_IMAGE if not image or untagged in _KATHARA_IMAGES else image


def _links(devices: dict[str, _Device]) -> list[dict[str, object]]:
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
