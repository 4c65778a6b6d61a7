"""Hypothesis strategies for hostile tool arguments, shared by the unit and the live-lab tests.

Each strategy mixes a form the tool accepts with shell syntax, control characters, odd
Unicode, path traversal, vtysh escapes and allowlist bypass attempts, so that examples sit on
both sides of every check.
"""

from __future__ import annotations

from hypothesis import strategies as st

MARKER = "NETDOJO-CANARY"
"""Every payload that would leave a trace names it: a file, a process, a config line."""

SHELL = [
    ";", "&&", "||", "|", "&", "`", "$(", ")", "${IFS}", ">", ">>", "<", "<<EOF", "*", "?", "~",
    "#", "!", "'", '"', "\\", "{", "}", "(", "[", "]", "=", "--", "-", " -- ", "\t",
]  # fmt: skip
CONTROL = ["\n", "\r", "\x00", "\x1b[2J", "\x7f", "\x0b", "\x0c", "\r\n", "\x85", "\u2028"]
UNICODE = [
    "\u00a0", "\u202e", "\ufeff", "\u200b", "\uff53\uff48\uff4f\uff57", "\u0455how", "ip\u0301",
    "\U0001f4a3", "\u00e9", "\ud800", "\udfff", "\uff29\uff30", "\u01c5", "\u00df",
]  # fmt: skip
TRAVERSAL = [
    "../../../../etc/shadow", "/etc/frr/../../etc/shadow", "/proc/1/environ", "/etc/frr/frr.conf",
    "/var/run/docker.sock", "/proc/sys/kernel/core_pattern", "~root/.ssh/id_rsa", "/dev/tcp/1/1",
    "net.//.kernel.core_pattern", "net.ipv4/../../kernel/hostname",
]  # fmt: skip
PAYLOADS = [
    f"touch /tmp/{MARKER}", f"sh -c 'touch /tmp/{MARKER}'", f"echo {MARKER} > /tmp/{MARKER}",
    f"bash -c 'sleep 600 # {MARKER}'", "reboot", "rm -rf /etc/frr", "id", "cat /etc/shadow",
    "nc -l -p 4444 -e /bin/sh", f"python3 -c 'open(\"/tmp/{MARKER}\",\"w\")'",
]  # fmt: skip
VTYSH_ESCAPES = [
    "do write memory", "write memory", "wr mem", "write file", "end", "exit", "quit", "!",
    "do start-shell", "start-shell", "start-shell bash", f"output file /tmp/{MARKER}",
    "out file /etc/frr/daemons", "copy /etc/shadow running-config", f"do ping {MARKER}",
    "ping 127.0.0.1", "traceroute 127.0.0.1", "terminal paginate", "do show version",
    "configure terminal", "conf t", "do clear ip ospf process", "watchfrr ignore ospfd",
    f"do shell touch /tmp/{MARKER}", "sh run", "disable", "enable",
]  # fmt: skip
BYPASS = [
    "-batch /tmp/x", "-ba /tmp/x", "-force", "-n other", "netns exec x sh", "vrf exec red sh",
    "--modprobe=/bin/sh", "--modp=/bin/sh", "--mo /bin/sh", "-f /tmp/rules",
    "include \"/etc/shadow\"",
    "'ruleset; flush ruleset'", "ruleset ; flush ruleset", "'add table t; include \"/etc/x\"'",
    "-K", "--kill", "-D /tmp/x", "-F /tmp/x", "-w net.x=1", "-p /etc/sysctl.conf", "-z /bin/sh",
    "-Z root -w /etc/passwd", "-r /etc/shadow", "-E", "-X", "-Z", "-F", "-P INPUT DROP",
]  # fmt: skip
READ_FORMS = [
    "show ip route", "show running-config", "show ip ospf neighbor", "show version", "ip route",
    "ip -j addr show", "ip -br link", "ss -tan", "iptables -S", "iptables -t nat -L -n",
    "nft list ruleset", "nft -j list tables", "cat /etc/frr/frr.conf",
    "tail -n 5 /var/log/frr/frr.log", "sysctl net.ipv4.ip_forward", "sysctl -a",
]  # fmt: skip
CHANGE_FORMS = [
    "ip route add 10.99.0.0/24 via 10.0.0.2", "ip link set lo up",
    "ip -4 address add 10.98.0.1/32 dev lo", "iptables -A INPUT -s 10.97.0.0/24 -j ACCEPT",
    "nft add table ip canary", "sysctl -w net.ipv4.ip_forward=1",
    "clear ip ospf process", "clear bgp *", "ip link set dev lo mtu 65536",
    "ip rule del pref 1000", "tc qdisc del dev eth0 root",
]  # fmt: skip
CONFIG_FORMS = [
    "router ospf", " network 10.99.0.0/24 area 0", "interface lo", " description test",
    "ip route 10.99.0.0/24 Null0", "no ip route 10.99.0.0/24 Null0", "hostname r1", "exit",
]  # fmt: skip
LONG = [
    "x" * 4096, "A" * 1021 + "wr mem", "\u00e9" * 1025, " " * 4095 + "write memory", "show " * 500,
]  # fmt: skip

FRAGMENTS = SHELL + CONTROL + UNICODE + TRAVERSAL + PAYLOADS + VTYSH_ESCAPES + BYPASS


def _glued(forms: list[str]) -> st.SearchStrategy[str]:
    """An accepted form with hostile fragments after it (and sometimes before it)."""
    fragment = st.one_of(
        st.sampled_from(BYPASS + VTYSH_ESCAPES + TRAVERSAL),
        st.sampled_from(FRAGMENTS),
        st.text(max_size=6),
    )
    return st.builds(
        lambda form, before, after, glue: (before + form + glue + after).strip(" "),
        st.sampled_from(forms),
        st.sampled_from(["", "", "", *SHELL, *CONTROL]),
        st.lists(fragment, min_size=1, max_size=3).map(" ".join),
        st.sampled_from([" ", " ", ";", "\n", "|", "&&", "\t", "\u00a0"]),
    )


def _any_text() -> st.SearchStrategy[str]:
    return st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


def hostile_text(forms: list[str]) -> st.SearchStrategy[str]:
    """A command string for a tool whose accepted forms are ``forms``."""
    return st.one_of(
        st.sampled_from(forms),
        _glued(forms),
        _glued(forms),
        st.lists(st.sampled_from(FRAGMENTS + forms), min_size=1, max_size=6).map(" ".join),
        st.sampled_from(FRAGMENTS + LONG),
        _any_text(),
    )


def hostile_lines() -> st.SearchStrategy[list[str]]:
    """Configuration lines for `configure`: real ones mixed with vtysh escapes and smuggling."""
    line = st.one_of(
        st.sampled_from(CONFIG_FORMS),
        st.sampled_from(VTYSH_ESCAPES + PAYLOADS + LONG + CONTROL),
        _glued(CONFIG_FORMS + VTYSH_ESCAPES),
        _any_text(),
    )
    return st.lists(line, min_size=0, max_size=5)


def hostile_name() -> st.SearchStrategy[str]:
    """A device, interface or destination name."""
    return st.one_of(
        st.sampled_from(["r1", "h1", "eth0", "lo", "any", "127.0.0.1", "::1", "10.0.0.2"]),
        _glued(["r1", "eth0", "h2", "10.0.0.2"]),
        st.sampled_from(FRAGMENTS + LONG + ["eth0\n", "eth9999", "r1 ", "R1", "..", ""]),
        _any_text(),
    )
