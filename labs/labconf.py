"""The grammar of Kathará's ``lab.conf`` and ``lab.dep``, read as Kathará 3.8 reads them.

Each device option either becomes a setting of the device, is ignored with a warning (it only
concerns terminals), or is refused with what to do instead: netdojo labs never reach off the
machine, so nothing that bridges a device to the host's network or gives it the host's files
or privileges is taken.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_DEVICE_LINE = re.compile(
    r"^(?P<device>\w+)\[(?P<key>\w+)\]=(?P<quote>[\"']?)(?P<value>[^\"']+)(?P=quote)(\s+#.*)?$"
)
_GENERAL_LINE = re.compile(
    r"^LAB_(?P<key>NAME|DESCRIPTION|VERSION|AUTHOR|EMAIL|WEB)=(?P<value>.*)$"
)
_DEP_LINE = re.compile(r"^(?P<device>\w+):\s?(?P<needs>(\w+ ?)+)$")
_COLLISION_DOMAIN = re.compile(r"^\w+$")
_SYSCTL = re.compile(r"^(?P<key>net\.([\w-]+\.)+[\w-]+)=(?P<value>[^=]*)$")
_ENV = re.compile(r"^(?P<key>\w+)=(?P<value>.*)$")
_ULIMIT = re.compile(r"^(?P<key>\w+)=(?P<soft>-?\d+)(:(?P<hard>-?\d+))?$")
_PORT = re.compile(r"^((?P<host>\d+):)?(?P<device>\d+)(/(?P<protocol>\w+))?$")
_UNIT_BYTES = {"b": 1, "k": 2**10, "m": 2**20, "g": 2**30}
_TRUE = {"y", "yes", "t", "true", "on", "1"}
_FALSE = {"n", "no", "f", "false", "off", "0"}
KATHARA_HOST_PORT = 3000
"""The host port Kathará gives ``device[port]=N`` when the line names none."""

NO_EXTERNAL = "netdojo labs never reach off the machine"
IGNORED = {
    "num_terms": "netdojo opens no terminals; use `netdojo lab connect LAB DEVICE`",
    "shell": "startup commands and `netdojo lab connect` use /bin/bash",
}
SINGLE = ("image", "mem", "cpus", "ipv6", "bridged", "privileged")
REPEATED = ("exec", "sysctl", "env", "ulimit", "port")
REFUSED_OPTIONS = ("bridged", "privileged", "volume")
SUPPORTED = ("image", "mem", "cpus", "ipv6", *REPEATED)


class OptionError(ValueError):
    """A value an option cannot take; the message says what it must be."""


@dataclass
class Notes:
    """Problems (the folder is refused) and warnings (something was skipped), in order."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class ConfDevice:
    interfaces: dict[int, str] = field(default_factory=dict)  # index -> collision domain
    macs: dict[int, str] = field(default_factory=dict)
    options: dict[str, object] = field(default_factory=dict)
    exec_lines: list[str] = field(default_factory=list)
    sysctls: dict[str, int | str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    ulimits: dict[str, dict[str, int]] = field(default_factory=dict)
    ports: dict[tuple[int, str], int] = field(default_factory=dict)  # (host, protocol) -> port


@dataclass
class LabConf:
    name: str | None = None
    about: dict[str, str] = field(default_factory=dict)
    devices: dict[str, ConfDevice] = field(default_factory=dict)


def memory_mib(value: str) -> int:
    """Kathará's ``mem`` (``128m``, ``1g``; a bare number is MiB) in whole MiB, rounded up."""
    unit = value[-1].lower()
    if unit not in _UNIT_BYTES:
        return int(value)
    return -(-int(value[:-1]) * _UNIT_BYTES[unit] // 2**20)


def flag(value: str) -> bool:
    word = value.strip().lower()
    if word in _TRUE | _FALSE:
        return word in _TRUE
    raise ValueError(value)


_CONVERT: dict[str, tuple[Callable[[str], object], str]] = {
    "image": (str, "an image name"),
    "mem": (memory_mib, "a size such as 128m or 1g"),
    "cpus": (float, "a number of CPUs such as 0.5"),
    "ipv6": (flag, "true or false"),
    "bridged": (flag, "true or false"),
    "privileged": (flag, "true or false"),
}


def parse_lab_conf(text: str, notes: Notes) -> LabConf:
    conf = LabConf()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        where = f"lab.conf line {number}"
        if not line or line.startswith("#"):
            continue
        general = _GENERAL_LINE.match(line)
        if general:
            value = general["value"].replace('"', "").replace("'", "").strip()
            if general["key"] == "NAME":
                conf.name = value
            else:
                conf.about[general["key"].lower()] = value
            continue
        match = _DEVICE_LINE.match(line)
        if match is None:
            notes.problems.append(f"{where}: cannot parse {line!r}")
            continue
        name, key, value = match["device"], match["key"], match["value"]
        device = conf.devices.setdefault(name, ConfDevice())
        if key.isdecimal():
            _add_interface(name, device, int(key), value, where, notes)
        else:
            _add_option(name, device, key, value, where, notes)
    return conf


def _add_interface(
    name: str, device: ConfDevice, index: int, value: str, where: str, notes: Notes
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
            device.macs[index] = mac.lower()


def _add_option(
    name: str, device: ConfDevice, key: str, value: str, where: str, notes: Notes
) -> None:
    if key in IGNORED:
        notes.warnings.append(f"{where}: {key} of {name!r} ignored: {IGNORED[key]}")
    elif key == "volume":
        notes.problems.append(
            f"{where}: volume of {name!r} would mount a host folder into the device; "
            f"{NO_EXTERNAL}: put the files in the lab's {name}/ folder instead"
        )
    elif key in SINGLE:
        _set_single(name, device, key, value, where, notes)
    elif key in REPEATED:
        try:
            replaced = _add_repeated(device, key, value)
        except OptionError as exc:
            notes.problems.append(f"{where}: {key} of {name!r} {exc}")
            return
        if replaced:
            notes.warnings.append(f"{where}: {key} {replaced} of {name!r} set again; the last wins")
    else:
        notes.problems.append(
            f"{where}: option {key!r} of device {name!r} is not supported; "
            f"the supported options are {', '.join(SUPPORTED)}"
        )


def _set_single(
    name: str, device: ConfDevice, key: str, value: str, where: str, notes: Notes
) -> None:
    convert, expected = _CONVERT[key]
    try:
        converted = convert(value)
    except ValueError:
        notes.problems.append(f"{where}: {key} of {name!r} must be {expected}, not {value!r}")
        return
    if key == "bridged" and converted:
        notes.problems.append(
            f"{where}: bridged of {name!r} would connect the device to the host's network; "
            f"{NO_EXTERNAL}: remove the line, and use {name}[port]=HOST:DEVICE to reach one of "
            "its ports from this machine (bound on 127.0.0.1 only)"
        )
    if key == "privileged" and converted:
        notes.problems.append(
            f"{where}: privileged of {name!r} would hand the device the host's kernel; "
            f"{NO_EXTERNAL}: remove the line (devices get the capabilities routing needs)"
        )
    if key in device.options:
        notes.warnings.append(f"{where}: {key} of {name!r} set again; the last value wins")
    device.options[key] = converted


def _add_repeated(device: ConfDevice, key: str, value: str) -> str:
    """Add one ``exec``, ``sysctl``, ``env``, ``ulimit`` or ``port`` line; returns what it
    replaced ('' if nothing), raises `OptionError` for a value Kathará would refuse."""
    if key == "exec":
        device.exec_lines.append(value)
        return ""
    if key == "sysctl":
        found = _SYSCTL.match(value)
        if found is None:
            raise OptionError(f"must be net.KEY=VALUE (only net.* settings), not {value!r}")
        setting = found["value"].strip()
        sysctl = found["key"]
        replaced = sysctl if sysctl in device.sysctls else ""
        device.sysctls[sysctl] = int(setting) if setting.lstrip("-").isdecimal() else setting
        return replaced
    if key == "env":
        found = _ENV.match(value)
        if found is None:
            raise OptionError(f"must be NAME=VALUE, not {value!r}")
        replaced = found["key"] if found["key"] in device.env else ""
        device.env[found["key"]] = found["value"].strip()
        return replaced
    if key == "ulimit":
        return _add_ulimit(device, value)
    return _add_port(device, value)


def _add_ulimit(device: ConfDevice, value: str) -> str:
    found = _ULIMIT.match(value)
    if found is None:
        raise OptionError(f"must be NAME=SOFT[:HARD], not {value!r}")
    soft = int(found["soft"])
    hard = int(found["hard"]) if found["hard"] is not None else soft
    if soft < -1 or hard < -1 or (soft == -1 and hard != -1):
        raise OptionError(f"{value!r}: limits are -1 (unlimited) or more, soft at most hard")
    if hard != -1 and soft > hard:
        soft = hard  # as Kathará does
    replaced = found["key"] if found["key"] in device.ulimits else ""
    device.ulimits[found["key"]] = {"soft": soft, "hard": hard}
    return replaced


def _add_port(device: ConfDevice, value: str) -> str:
    found = _PORT.match(value)
    if found is None:
        raise OptionError(f"must be [HOST:]DEVICE[/tcp|udp], not {value!r}")
    protocol = (found["protocol"] or "tcp").lower()
    if protocol not in ("tcp", "udp"):
        raise OptionError(f"protocol {protocol!r} is not supported; use tcp or udp")
    host = int(found["host"]) if found["host"] else KATHARA_HOST_PORT
    key = (host, protocol)
    replaced = f"{host}/{protocol}" if key in device.ports else ""
    device.ports[key] = int(found["device"])
    return replaced


def parse_lab_dep(text: str, notes: Notes) -> dict[str, list[str]]:
    """``DEVICE: NEEDED NEEDED…`` lines: each device with the devices it starts after."""
    needs: dict[str, list[str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        found = _DEP_LINE.match(line)
        if found is None:
            notes.problems.append(f"lab.dep line {number}: cannot parse {line!r}")
            continue
        needs.setdefault(found["device"], []).extend(found["needs"].split())
    return needs
