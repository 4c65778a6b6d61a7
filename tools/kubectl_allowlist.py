"""Which `kubectl` command lines an agent may run against its lab's API server, and why others
are refused.

A command line is read as kubectl reads it (a verb, resources, flags) without a shell. Reads
(`get`, `describe`, `explain`, `api-resources`) may name the lab's own kinds; changes (`apply`,
`create`, `replace`, `delete`, `patch`, `label`, `annotate`) may touch NetworkPolicies only,
and a manifest comes as the call's ``manifest``, never from a file. Flags that pick another
server, identity or file, or that print credentials, are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from netdojo.tools.allowlist import CommandRefused, split_words

KUBECTL_FORMS = (
    "get|describe TYPE[/NAME] [NAME...] [-n NS|-A] [-l SELECTOR] [-o yaml|json|wide|name|"
    "jsonpath=...|custom-columns=...] [--show-labels]",
    "explain TYPE[.FIELD...] [--recursive]",
    "api-resources",
    "apply|create|replace|delete -f - (the manifest in `manifest`; NetworkPolicy objects)",
    "delete|patch|label|annotate networkpolicy NAME [-n NS] [-p PATCH --type merge|json|"
    "strategic] [KEY=VALUE|KEY-...] [--overwrite]",
    "any change with --dry-run=server|client",
)
READ_VERBS = frozenset({"get", "describe", "explain", "api-resources"})
WRITE_VERBS = frozenset({"apply", "create", "replace", "delete", "patch", "label", "annotate"})
MANIFEST_VERBS = frozenset({"apply", "create", "replace", "delete"})
RESOURCES = {
    "pods": ("po", "pod", "pods"),
    "services": ("svc", "service", "services"),
    "namespaces": ("ns", "namespace", "namespaces"),
    "networkpolicies": (
        "netpol",
        "networkpolicy",
        "networkpolicies",
        "networkpolicy.networking.k8s.io",
        "networkpolicies.networking.k8s.io",
    ),
    "endpoints": ("ep", "endpoints"),
    "endpointslices": (
        "endpointslice",
        "endpointslices",
        "endpointslices.discovery.k8s.io",
    ),
    "events": ("ev", "event", "events"),
}
WRITABLE = frozenset({"networkpolicies"})
WRITABLE_KINDS = frozenset({"NetworkPolicy"})
_ALIASES = {alias: name for name, aliases in RESOURCES.items() for alias in aliases}

VALUE_FLAGS = {
    "-n": "namespace",
    "--namespace": "namespace",
    "-o": "output",
    "--output": "output",
    "-l": "selector",
    "--selector": "selector",
    "--field-selector": "field-selector",
    "-p": "patch",
    "--patch": "patch",
    "--type": "type",
    "--dry-run": "dry-run",
    "-f": "filename",
    "--filename": "filename",
    "--sort-by": "sort-by",
}
SWITCHES = {
    "-A": "all-namespaces",
    "--all-namespaces": "all-namespaces",
    "--show-labels": "show-labels",
    "--overwrite": "overwrite",
    "--recursive": "recursive",
    "--no-headers": "no-headers",
    "--all": "all",
    "--server-side": "server-side",
    "--force-conflicts": "force-conflicts",
}
OUTPUTS = re.compile(r"^(yaml|json|wide|name|jsonpath=.*|custom-columns=.*)$")
PATCH_TYPES = frozenset({"merge", "json", "strategic"})
DRY_RUNS = frozenset({"server", "client", "none"})
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
MAX_MANIFEST_CHARS = 64 * 1024


class KubectlRefused(CommandRefused):
    forms = KUBECTL_FORMS


@dataclass(frozen=True)
class KubectlCommand:
    """An allowed command line: the words to hand kubectl, and whether it changes state."""

    argv: list[str]
    verb: str
    changes_state: bool


def parse_kubectl(command: str, manifest: str | None = None) -> KubectlCommand:
    """The command as kubectl's arguments, or `KubectlRefused` saying why not."""
    words = split_words(command, KubectlRefused)
    if words[:1] == ["kubectl"]:
        words = words[1:]
    if not words:
        raise KubectlRefused("empty command")
    verb = words[0]
    if verb not in READ_VERBS | WRITE_VERBS:
        raise KubectlRefused(f"the verb {verb!r} is not allowed")
    flags, positional = _flags(words[1:])
    resources = _resources(verb, positional)
    dry_run = flags.get("dry-run", "none")
    if dry_run not in DRY_RUNS:
        raise KubectlRefused(f"--dry-run must be one of {', '.join(sorted(DRY_RUNS))}")
    _check_values(flags)
    filename = flags.get("filename")
    if filename is not None:
        if filename != "-" or verb not in MANIFEST_VERBS:
            raise KubectlRefused(
                "-f is allowed only as `-f -` with apply, create, replace or delete"
            )
        if manifest is None:
            raise KubectlRefused("`-f -` reads the call's manifest, and none was given")
        check_manifest(manifest)
    elif manifest is not None:
        raise KubectlRefused("a manifest is read only by `-f -`")
    if verb in WRITE_VERBS:
        if filename is None and verb in {"apply", "create", "replace"}:
            raise KubectlRefused(f"{verb} takes its objects from `-f -`")
        refused = sorted(r for r in resources if r not in WRITABLE)
        if refused:
            raise KubectlRefused(f"{', '.join(refused)} are read-only; only NetworkPolicies change")
        if filename is None and not resources:
            raise KubectlRefused(f"{verb} must name a networkpolicy")
    return KubectlCommand(
        argv=words, verb=verb, changes_state=verb in WRITE_VERBS and dry_run == "none"
    )


def _flags(words: list[str]) -> tuple[dict[str, str], list[str]]:
    flags: dict[str, str] = {}
    positional: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, equals, value = word.partition("=")
        if name in SWITCHES and not equals:
            flags[SWITCHES[name]] = "true"
        elif name in VALUE_FLAGS:
            if not equals:
                if index >= len(words):
                    raise KubectlRefused(f"{name} needs a value")
                value = words[index]
                index += 1
            flags[VALUE_FLAGS[name]] = value
        else:
            raise KubectlRefused(f"the flag {name!r} is not allowed")
    return flags, positional


def _resources(verb: str, positional: list[str]) -> set[str]:
    """The canonical resources the positional words name; label/annotate changes are words
    too (``key=value``, ``key-``)."""
    if verb == "api-resources":
        if positional:
            raise KubectlRefused("api-resources takes no arguments")
        return set()
    if verb == "explain":
        if len(positional) != 1:
            raise KubectlRefused("explain takes one TYPE[.FIELD...]")
        return {_resource(positional[0].split(".", 1)[0])}
    if not positional:
        return set()
    first, rest = positional[0], positional[1:]
    if "/" in first:
        named = [first, *[w for w in rest if "/" in w]]
        resources = {_resource(word.split("/", 1)[0]) for word in named}
        leftover = [w for w in rest if "/" not in w]
    else:
        resources = {_resource(kind) for kind in first.split(",")}
        leftover = rest
    for word in leftover:
        if verb in {"label", "annotate"} and ("=" in word or word.endswith("-")):
            continue
        if not _NAME.match(word):
            raise KubectlRefused(f"{word!r} is not an object name")
    return resources


def _resource(word: str) -> str:
    try:
        return _ALIASES[word.lower()]
    except KeyError:
        known = ", ".join(sorted(RESOURCES))
        raise KubectlRefused(f"the resource {word!r} is not allowed; resources: {known}") from None


def _check_values(flags: dict[str, str]) -> None:
    namespace = flags.get("namespace")
    if namespace is not None and not _DNS_LABEL.match(namespace):
        raise KubectlRefused(f"{namespace!r} is not a namespace name")
    output = flags.get("output")
    if output is not None and not OUTPUTS.match(output):
        raise KubectlRefused(
            "-o must be yaml, json, wide, name, jsonpath=... or custom-columns=..."
        )
    patch_type = flags.get("type")
    if patch_type is not None and patch_type not in PATCH_TYPES:
        raise KubectlRefused(f"--type must be one of {', '.join(sorted(PATCH_TYPES))}")


def check_manifest(manifest: str) -> None:
    """Every object of the manifest (YAML or JSON, one or several documents, or a List) is a
    NetworkPolicy."""
    if len(manifest) > MAX_MANIFEST_CHARS:
        raise KubectlRefused(f"a manifest may have at most {MAX_MANIFEST_CHARS} characters")
    try:
        documents = [d for d in yaml.safe_load_all(manifest) if d is not None]
    except yaml.YAMLError as exc:
        raise KubectlRefused(f"the manifest is not YAML or JSON ({exc})") from None
    if not documents:
        raise KubectlRefused("the manifest holds no object")
    for document in documents:
        for item in _objects(document):
            kind = item.get("kind")
            if kind not in WRITABLE_KINDS:
                raise KubectlRefused(
                    f"a manifest may hold NetworkPolicy objects only, not {kind!r}"
                )


def _objects(document: Any) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        raise KubectlRefused("every document of the manifest must be an object")
    if document.get("kind") == "List":
        items = document.get("items")
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise KubectlRefused("a List's items must be objects")
        return items
    return [document]
