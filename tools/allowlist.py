"""Which state-changing Linux commands an agent may run in a device, and why others are refused."""

from __future__ import annotations

import re
import shlex

ALLOWED_FORMS = (
    "ip [-4|-6] address add|del|replace|flush ...",
    "ip [-4|-6] link set [dev] IFACE up|down|mtu N|address MAC ...",
    "ip [-4|-6] route add|del|replace|change|flush ... (without proto: a route's source is "
    "whoever installs it)",
    "ip [-4|-6] rule add|del ...",
    "tc qdisc|class add|del|replace|change ...",
    "iptables|ip6tables ... (any rule operation)",
    "nft add|insert|delete|replace|flush|create ...",
    "clear ip ospf process|neighbor ... | clear [ip] bgp ... (FRR, run through vtysh)",
)
IP_OBJECTS = {
    "address": {"add", "del", "delete", "replace", "flush"},
    "link": {"set"},
    "route": {"add", "del", "delete", "replace", "change", "flush"},
    "rule": {"add", "del", "delete"},
}
TC_OBJECTS = {"qdisc", "class"}
TC_VERBS = {"add", "del", "delete", "replace", "change"}
IP_ABBREVIATIONS = {
    "a": "address", "addr": "address", "l": "link", "r": "route", "ro": "route", "ru": "rule"
}  # fmt: skip
FORBIDDEN_WORDS = {"netns", "vrf", "-batch", "-b", "-force", "--modprobe", "-f", "include"}
_FRR_CLEAR = re.compile(r"^clear (ip ospf (process|neighbor)|(ip )?bgp)( [\w.:/*-]+)*$")
NFT_VERBS = {"add", "insert", "delete", "replace", "flush", "create"}
MAX_COMMAND_CHARS = 2048


class CommandRefused(ValueError):
    """A command outside the allowlist; the message says why and lists the allowed forms."""

    forms: tuple[str, ...] = ALLOWED_FORMS

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"refused: {reason}. Allowed forms: {'; '.join(self.forms)}")


def split_words(text: str, refusal: type[CommandRefused], what: str = "command") -> list[str]:
    """Split ``text`` into words as a shell would, without ever running one."""
    if len(text) > MAX_COMMAND_CHARS:
        raise refusal(f"a {what} may have at most {MAX_COMMAND_CHARS} characters")
    if any(_is_control(c) for c in text):
        raise refusal(f"control characters are not allowed in a {what}")
    if not text.isascii() and not _encodable(text):
        raise refusal(f"the {what} is not valid Unicode text")
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise refusal(f"cannot parse the {what} ({exc})") from None


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _is_control(char: str) -> bool:
    return char != "\t" and (ord(char) < 32 or ord(char) == 127)


def nft_problem(words: list[str]) -> str | None:
    """Why an nft command line is refused, if it is: nft joins its arguments into one script,
    so a `;` outside braces and strings starts a second command, and `include` reads a file."""
    script = " ".join(words)
    if "include" in script:
        return "nft include is not allowed"
    depth, quoted = 0, False
    for char in script:
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return "unbalanced braces"
        elif char == ";" and depth == 0:
            return "one nft command per call (`;` only inside braces)"
    return None


def parse_command(command: str) -> list[str]:
    """Split ``command`` with shlex and check it against the allowlist; returns the argv."""
    argv = split_words(command, CommandRefused)
    if not argv:
        raise CommandRefused("empty command")
    forbidden = FORBIDDEN_WORDS.intersection(argv)
    if forbidden:
        raise CommandRefused(f"{', '.join(sorted(forbidden))} is not allowed")
    program = argv[0]
    if program == "clear":
        return _frr_clear(argv)
    if program == "ip":
        _check_ip(argv[1:])
    elif program in ("iptables", "ip6tables"):
        if len(argv) < 2:
            raise CommandRefused("iptables needs a rule operation")
        if any(_abbreviates("--modprobe", word.split("=")[0]) for word in argv[1:]):
            raise CommandRefused("--modprobe is not allowed")
    elif program == "tc":
        if len(argv) < 3 or argv[1] not in TC_OBJECTS or argv[2] not in TC_VERBS:
            raise CommandRefused(
                f"tc needs one of {', '.join(sorted(TC_OBJECTS))} and one of "
                f"{', '.join(sorted(TC_VERBS))}"
            )
    elif program == "nft":
        if len(argv) < 2 or argv[1] not in NFT_VERBS:
            raise CommandRefused(f"nft verb must be one of {', '.join(sorted(NFT_VERBS))}")
        problem = nft_problem(argv[1:])
        if problem:
            raise CommandRefused(problem)
    else:
        raise CommandRefused(f"{program!r} is not an allowed program")
    return argv


def _abbreviates(option: str, word: str) -> bool:
    """Whether getopt_long would take ``word`` for ``option`` (a unique prefix of 4+ chars)."""
    return len(word) >= 4 and option.startswith(word)


def _frr_clear(argv: list[str]) -> list[str]:
    text = " ".join(argv)
    if not _FRR_CLEAR.match(text) or "|" in text:
        raise CommandRefused(
            "FRR clears are `clear ip ospf process|neighbor ...` or `clear bgp ...`"
        )
    return ["vtysh", "-c", text]


def _check_ip(args: list[str]) -> None:
    rest = [a for a in args if a not in ("-4", "-6")]
    if not rest:
        raise CommandRefused("ip needs an object (address, link, route, rule)")
    obj = IP_ABBREVIATIONS.get(rest[0], rest[0])
    if obj not in IP_OBJECTS:
        raise CommandRefused(f"`ip {rest[0]}` is not allowed here (use the show tool to read)")
    if len(rest) < 2 or rest[1] not in IP_OBJECTS[obj]:
        verbs = ", ".join(sorted(IP_OBJECTS[obj]))
        raise CommandRefused(f"`ip {obj}` needs one of: {verbs}")
    if obj == "route" and any(len(w) >= 3 and "protocol".startswith(w) for w in rest[2:]):
        raise CommandRefused("a route's protocol is set by whoever installs it, not given")
