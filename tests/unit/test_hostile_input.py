"""Properties of the tool allowlists under hostile input: every string either is refused with
the allowed forms, or becomes an argument vector of an allowed program whose every word is
one the allowlist checked. The live counterpart is tests/integration/test_hostile_tools.py."""

from __future__ import annotations

import json
import re
import shlex

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netdojo.tools.allowlist import ALLOWED_FORMS, CommandRefused, parse_command
from netdojo.tools.capture import CaptureRefused, tcpdump_argv
from netdojo.tools.config_allowlist import CONFIG_FORMS, ConfigRefused, check_config_lines
from netdojo.tools.read_allowlist import READ_FORMS, READABLE_FILES, ReadRefused, parse_read
from netdojo.tools.trajectory import Trajectory
from tests.hostile_inputs import CHANGE_FORMS, hostile_lines, hostile_name, hostile_text
from tests.hostile_inputs import READ_FORMS as READ_EXAMPLES

PROPERTY = settings(
    max_examples=200, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
# What FRR 8.4's vtysh offers in exec mode only (`list` in both modes, compared), and the
# commands that escape to programs or files from any mode; `configure` aside, which only
# enters configuration mode.
VTYSH_EXEC_ONLY = (
    "add", "copy", "disable", "graceful-restart", "mtrace", "ping", "show", "terminal",
    "traceroute", "write", "output", "do", "start-shell", "clear",
)  # fmt: skip
VTYSH_READ_BUFFER = 4096  # fgets() in `vtysh -f` reads at most this many bytes minus one
READ_PROGRAMS = {"vtysh", "ip", "ss", "iptables", "ip6tables", "nft", "cat", "tail", "sysctl"}
CHANGE_PROGRAMS = {"vtysh", "ip", "iptables", "ip6tables", "nft", "tc"}
IP_WRITE_VERBS = {
    "add", "del", "delete", "replace", "change", "set", "flush", "append", "prepend", "save",
    "restore", "monitor",
}  # fmt: skip


def _utf8(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return False
    return True


def _clean(word: str) -> bool:
    return not any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in word)


def _outside_braces(script: str) -> str:
    """The nft script with quoted strings and brace blocks removed."""
    script = re.sub(r'"[^"]*"', "", script)
    while True:
        inner = re.sub(r"\{[^{}]*\}", "", script)
        if inner == script:
            return script
        script = inner


def _refusal_names_the_forms(refused: CommandRefused, forms: tuple[str, ...]) -> None:
    message = str(refused)
    assert refused.reason and message.startswith("refused: ")
    assert all(form in message for form in forms)


@PROPERTY
@given(hostile_text(READ_EXAMPLES))
@example("nft list 'ruleset; flush ruleset'")  # nft runs what follows the `;`
@example("nft list ruleset ; flush ruleset")
def test_the_read_tool_runs_only_checked_reads(command: str) -> None:
    try:
        read = parse_read(command)
    except ReadRefused as refused:
        _refusal_names_the_forms(refused, READ_FORMS)
        return
    argv = read.argv
    assert argv[0] in READ_PROGRAMS and all(_clean(w) for w in argv)
    if argv[0] == "vtysh":
        pairs = list(zip(argv[1::2], argv[2::2], strict=True))
        assert all(flag == "-c" and text.startswith("show ") for flag, text in pairs)
        assert all("|" not in text and "\n" not in text for _, text in pairs)
        return
    assert argv == shlex.split(command), "the words run are the words checked"
    program, args = argv[0], argv[1:]
    if program in ("cat", "tail"):
        assert args[-1] in READABLE_FILES and all(a in ("-n",) or a.isdigit() for a in args[:-1])
    elif program == "ip":
        words = [a for a in args if not a.startswith("-")]
        assert len(words) < 2 or words[1] not in IP_WRITE_VERBS
    elif program in ("iptables", "ip6tables"):
        assert not {"-A", "-D", "-I", "-R", "-F", "-Z", "-N", "-X", "-P", "-E"} & set(args)
    elif program == "nft":
        assert next(a for a in args if not a.startswith("-")) == "list"
        assert "include" not in command and ";" not in _outside_braces(" ".join(args))
    elif program == "ss":
        short = [a[1:] for a in args if a.startswith("-") and not a.startswith("--")]
        assert "--kill" not in args and not any(set(s) & set("KDFN") for s in short)
    elif program == "sysctl":
        assert "-w" not in args and all(a in ("-n", "-a") or a.startswith("net.") for a in args)
        assert not any("/" in a or ".." in a for a in args)


@PROPERTY
@given(hostile_text(CHANGE_FORMS))
@example("nft add 'table ip t; include \"/etc/hostname\"'")  # prints the file in its error
@example("sysctl -w net.//.kernel.hostname=x")  # sysctl swaps `.` and `/`: net/../kernel
@example("iptables -A INPUT -m nosuch --modp=/usr/bin/touch")  # getopt takes the prefix
def test_the_execute_tool_runs_only_allowlisted_programs(command: str) -> None:
    try:
        argv = parse_command(command)
    except CommandRefused as refused:
        _refusal_names_the_forms(refused, ALLOWED_FORMS)
        return
    assert argv[0] in CHANGE_PROGRAMS and all(_clean(w) for w in argv)
    if argv[0] == "vtysh":
        assert argv[1] == "-c" and len(argv) == 3 and argv[2].startswith("clear ")
        assert re.fullmatch(r"[\w .:/*-]+", argv[2]), "a clear takes plain words only"
        return
    assert argv == shlex.split(command), "the words run are the words checked"
    assert not {"netns", "vrf", "-batch", "-b", "-force", "include"} & set(argv)
    if argv[0] == "nft":
        script = " ".join(argv[1:])
        assert "include" not in script and ";" not in _outside_braces(script)
    elif argv[0] in ("iptables", "ip6tables"):
        assert not any(w.startswith("--mo") for w in argv)
    elif argv[0] == "ip":
        assert next(a for a in argv[1:] if a not in ("-4", "-6"))[0] != "-", "no global options"
    elif argv[0] == "tc":
        assert argv[1] in ("qdisc", "class"), "no global options, no filters or actions"


@PROPERTY
@given(hostile_lines())
@example(["exit", "write memory"])  # a top-level exit reaches exec mode
@example(["exit", "out file /etc/frr/daemons"])
@example(["!" + " " * 4094 + "exit", "!" + " " * 4094 + "wr mem"])  # read in 4095-byte chunks
def test_configure_passes_only_configuration_lines_to_vtysh(lines: list[str]) -> None:
    try:
        check_config_lines(lines)
    except ConfigRefused as refused:
        _refusal_names_the_forms(refused, CONFIG_FORMS)
        return
    for line in lines:
        assert _clean(line), "one line per entry: a newline would start another command"
        assert len(line.encode()) + 1 < VTYSH_READ_BUFFER - 1, "vtysh reads it in one chunk"
        words = line.split()
        if words:
            first = words[0].lower()
            assert not any(command.startswith(first) for command in VTYSH_EXEC_ONLY), line


@PROPERTY
@given(hostile_name(), hostile_text(["icmp", "tcp port 179", "proto ospf", "host 10.0.0.1"]))
@example("eth0\n", "icmp")  # `$` matches before a final newline
def test_capture_filters_never_become_tcpdump_options(interface: str, expression: str) -> None:
    try:
        argv = tcpdump_argv(interface, expression, 5, "/tmp/c.pcap")
    except CaptureRefused as refused:
        _refusal_names_the_forms(refused, CaptureRefused.forms)
        return
    assert re.fullmatch(r"eth\d{1,3}|lo|any", interface)
    fixed, words = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    assert fixed == [
        "tcpdump", "-i", interface, "-n", "-U", "-Z", "root", "-s", "256", "-c", "5",
        "-w", "/tmp/c.pcap",
    ]  # fmt: skip
    assert words == shlex.split(expression) and not any(w.startswith("-") for w in words)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(hostile_name(), st.one_of(hostile_name(), hostile_lines()), max_size=3))
def test_a_trajectory_stays_writable_whatever_the_arguments(arguments: dict[str, object]) -> None:
    trajectory = Trajectory(episode="hostile")
    trajectory.record("show", arguments, 0.0, ok=False, summary="refused", refused=True)
    again = Trajectory.model_validate_json(trajectory.model_dump_json()).steps[0].arguments
    plain = {k: v for k, v in arguments.items() if _utf8(k) and _utf8(v)}
    assert all(again[k] == v for k, v in plain.items()), "what UTF-8 can hold is kept as is"
