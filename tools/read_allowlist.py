"""Which read-only commands the `show` tool runs in a device, and the JSON form of each.

A command is either an FRR `show …` command (run through vtysh) or one of a few read-only
Linux commands. Every argument is checked, so no form can change state or leave the device.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from netdojo.scenarios.services import READABLE as SERVICE_FILES
from netdojo.tools.allowlist import CommandRefused, nft_problem, split_words

READ_FORMS = (
    "show ... (any FRR show command, without `|` filters)",
    "ip [-4|-6] [-j] [-d] [-s] [-br] address|link|route|neigh|rule [show|list|get ...]"
    " (-j gives parsed JSON)",
    "ss [-tuanlpeims46] [filter]",
    "iptables|ip6tables [-t TABLE] -S|-L [CHAIN] [-n] [-v] [--line-numbers]",
    "nft [-a] [-j] list ... (-j gives parsed JSON)",
    "cat|tail [-n N] /etc/frr/frr.conf|/etc/frr/daemons|/var/log/frr/frr.log|"
    + "|".join(SERVICE_FILES),
    "dig [@SERVER] [+short] NAME [A]",
    "sysctl [-n] net.KEY ... | sysctl -a",
)
READABLE_FILES = {"/etc/frr/frr.conf", "/etc/frr/daemons", "/var/log/frr/frr.log", *SERVICE_FILES}
_DIG_WORD = re.compile(r"^(@[\d.]+|\+short|[A-Za-z0-9][\w.-]*)$")
IP_OBJECTS = {
    "address": "address", "addr": "address", "a": "address",
    "link": "link", "l": "link",
    "route": "route", "r": "route", "ro": "route",
    "neigh": "neigh", "neighbor": "neigh", "n": "neigh",
    "rule": "rule", "ru": "rule",
}  # fmt: skip
IP_WRITE_VERBS = {
    "add", "del", "delete", "replace", "change", "set", "flush", "append", "prepend",
    "save", "restore", "monitor", "help",
}  # fmt: skip
IP_OPTIONS = {
    "-4", "-6", "-j", "-json", "-p", "-pretty", "-d", "-details", "-s", "-stats",
    "-statistics", "-br", "-brief", "-o", "-oneline",
}  # fmt: skip
SS_SHORT = set("tuanlpeims46xwHOr")
SS_LONG = {
    "--tcp", "--udp", "--all", "--numeric", "--listening", "--processes", "--extended",
    "--info", "--memory", "--summary", "--ipv4", "--ipv6", "--unix", "--raw", "--no-header",
    "--oneline",
}  # fmt: skip
IPTABLES_TABLES = {"filter", "nat", "mangle", "raw", "security"}
IPTABLES_FLAGS = {"-n", "--numeric", "-v", "--verbose", "-x", "--exact", "--line-numbers"}
NFT_OPTIONS = {"-a", "--handle", "-j", "--json", "-n", "--numeric", "-s", "--stateless"}
_DOCUMENT_START = re.compile(r"^[{\[]", re.MULTILINE)
_SYSCTL_KEY = re.compile(r"^net(\.[\w-]+)+$")
# FRR show commands with a `json` variant that prints one JSON document (checked on FRR 8.4).
VTYSH_JSON_PREFIXES = (
    "show ip route", "show ipv6 route", "show ip ospf", "show ip bgp", "show bgp", "show interface",
)  # fmt: skip
VTYSH_NO_JSON = ("show ip ospf border-routers",)


class ReadCommand(BaseModel):
    """A checked read-only command: the argv to run and where its JSON form is.

    ``json_form`` is "none", "whole" (the output is JSON: `ip -j`, `nft -j`, FRR `… json`), or
    "trailing" (one vtysh run prints the text form, then the JSON form: one process, so the
    JSON costs next to nothing).
    """

    kind: Literal["frr", "linux"]
    argv: list[str]
    json_form: Literal["none", "whole", "trailing"] = "none"


class ReadRefused(CommandRefused):
    forms = READ_FORMS


def parse_read(command: str) -> ReadCommand:
    """Check ``command`` against the read-only allowlist; returns what to run."""
    argv = split_words(command, ReadRefused)
    if not argv:
        raise ReadRefused("empty command")
    program = argv[0]
    if program == "show":
        return _frr_show(" ".join(argv))
    checks: dict[str, Callable[[list[str]], None]] = {
        "ip": _check_ip,
        "ss": _check_ss,
        "iptables": _check_iptables,
        "ip6tables": _check_iptables,
        "nft": _check_nft,
        "cat": _check_file_read,
        "tail": _check_file_read,
        "sysctl": _check_sysctl,
        "dig": _check_dig,
    }
    if program not in checks:
        raise ReadRefused(f"{program!r} is not a read-only command here")
    checks[program](argv)
    whole = program in ("ip", "nft") and _asks_json(argv)
    return ReadCommand(kind="linux", argv=argv, json_form="whole" if whole else "none")


def _frr_show(text: str) -> ReadCommand:
    if "|" in text:
        raise ReadRefused("output filters (`|`) are not supported; the full output is returned")
    if text.endswith(" json"):
        return ReadCommand(kind="frr", argv=["vtysh", "-c", text], json_form="whole")
    if text.startswith(VTYSH_JSON_PREFIXES) and not text.startswith(VTYSH_NO_JSON):
        return ReadCommand(
            kind="frr", argv=["vtysh", "-c", text, "-c", f"{text} json"], json_form="trailing"
        )
    return ReadCommand(kind="frr", argv=["vtysh", "-c", text])


def _asks_json(argv: list[str]) -> bool:
    return any(a in ("-j", "-json", "--json") for a in argv)


def _check_ip(argv: list[str]) -> None:
    options = [a for a in argv[1:] if a.startswith("-")]
    unknown = [a for a in options if a not in IP_OPTIONS]
    if unknown:
        raise ReadRefused(f"ip option {unknown[0]!r} is not allowed here")
    rest = [a for a in argv[1:] if a not in IP_OPTIONS]
    if not rest or rest[0] not in IP_OBJECTS:
        raise ReadRefused("ip needs an object: address, link, route, neigh or rule")
    verb = rest[1] if len(rest) > 1 else "show"
    if verb in IP_WRITE_VERBS:
        raise ReadRefused(f"`ip {rest[0]} {verb}` is not a read; the execute tool changes state")
    if verb == "get" and IP_OBJECTS[rest[0]] != "route":
        raise ReadRefused("only `ip route get` is a read")


def _check_ss(argv: list[str]) -> None:
    for arg in argv[1:]:
        if arg.startswith("--"):
            if arg not in SS_LONG:
                raise ReadRefused(f"ss option {arg!r} is not allowed here")
        elif arg.startswith("-") and not set(arg[1:]) <= SS_SHORT:
            raise ReadRefused(f"ss option {arg!r} is not allowed here (no -K, -D, -F, -N)")


def _check_iptables(argv: list[str]) -> None:
    args = argv[1:]
    listing = [a for a in args if a in ("-S", "-L", "--list", "--list-rules")]
    if len(listing) != 1:
        raise ReadRefused("iptables reads need exactly one of -S or -L")
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-t", "--table"):
            if i + 1 >= len(args) or args[i + 1] not in IPTABLES_TABLES:
                raise ReadRefused(f"-t needs one of {', '.join(sorted(IPTABLES_TABLES))}")
            i += 2
            continue
        if arg.startswith("-") and arg not in IPTABLES_FLAGS and arg not in listing:
            raise ReadRefused(f"iptables option {arg!r} is not allowed in a read")
        i += 1


def _check_nft(argv: list[str]) -> None:
    args = argv[1:]
    while args and args[0] in NFT_OPTIONS:
        args = args[1:]
    if not args or args[0] != "list":
        raise ReadRefused("nft reads must be `nft [-a] [-j] list ...`")
    if any(a.startswith("-") for a in args):
        raise ReadRefused("nft options go before `list`")
    problem = nft_problem(args)
    if problem:
        raise ReadRefused(problem)


def _check_file_read(argv: list[str]) -> None:
    args = argv[1:]
    if argv[0] == "tail" and len(args) >= 2 and args[0] == "-n":
        if not args[1].isdigit():
            raise ReadRefused("tail -n needs a number of lines")
        args = args[2:]
    if len(args) != 1 or args[0] not in READABLE_FILES:
        files = ", ".join(sorted(READABLE_FILES))
        raise ReadRefused(f"only these files can be read: {files}")


def _check_dig(argv: list[str]) -> None:
    if len(argv) > 5 or not all(_DIG_WORD.match(word) for word in argv[1:]):
        raise ReadRefused("dig reads are `dig [@SERVER] [+short] NAME [A]`")


def _check_sysctl(argv: list[str]) -> None:
    args = argv[1:]
    keys = [a for a in args if a != "-n"]
    if args != ["-a"] and (not keys or not all(_SYSCTL_KEY.match(k) for k in keys)):
        raise ReadRefused("sysctl reads are `sysctl [-n] net.KEY ...` or `sysctl -a`")


def split_trailing_json(output: str) -> tuple[str, Any]:
    """Split a vtysh run of `CMD` then `CMD json` into the text and the parsed JSON."""
    decoder = json.JSONDecoder()
    for match in _DOCUMENT_START.finditer(output):
        try:
            parsed, end = decoder.raw_decode(output, match.start())
        except json.JSONDecodeError:
            continue
        if not output[end:].strip():
            return output[: match.start()], parsed
    lines = output.splitlines(keepends=True)
    while lines and lines[-1].startswith("% ") and lines[-1].rstrip().endswith(" json"):
        lines.pop()
    return "".join(lines), None
