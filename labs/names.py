"""Names of deployed labs: which are allowed, and a readable one derived from a title.

A deployed lab's name becomes a Docker label, the name of its record file and, through its
hash, Kathará's identity of the lab. Kathará hashes a name after dropping every non-ASCII
character, so two names that differ only there would be the same lab: names keep to the
characters Docker allows in object names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from netdojo.labs.errors import LabError

NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,29}$"
"""A link's or a lab spec's name."""
DEVICE_PATTERN = r"^[a-z][a-z0-9_]{0,29}$"
"""A device's name: Kathará refuses a '-' in one."""
MAX_LAB_NAME = 64
LAB_NAME_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9_.-]{{0,{MAX_LAB_NAME - 1}}}$"
ALLOWED_CHARACTERS = (
    "letters a-z and A-Z, digits, '_', '.' and '-', starting with a letter or a digit, "
    f"at most {MAX_LAB_NAME} characters"
)
DERIVED_LENGTH = 40
"""Words of a title kept in a derived name: whole words, up to this many characters."""

_LAB_NAME_RE = re.compile(LAB_NAME_PATTERN)


def check_lab_name(name: str) -> None:
    """Refuse a name Docker or Kathará would not take as it is."""
    if not _LAB_NAME_RE.fullmatch(name):
        raise LabError(
            f"lab name {name!r} is refused: a lab name may hold only {ALLOWED_CHARACTERS}"
        )


def words(title: str) -> list[str]:
    """The lower-case ASCII words of ``title`` (accents dropped, ``_`` kept after a letter or
    a digit)."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.findall(r"[a-z0-9][a-z0-9_]*", ascii_text.lower())


def slug(title: str, limit: int) -> str:
    """Whole words of ``title`` joined by ``-``, as many as fit in ``limit`` characters;
    a first word longer than that is cut."""
    kept: list[str] = []
    for word in words(title):
        if len("-".join([*kept, word])) > limit:
            break
        kept.append(word)
    if not kept:
        return "".join(words(title))[:limit]
    return "-".join(kept)


def readable_name(title: str, taken: Callable[[str], bool]) -> str:
    """A lab name from ``title``: its words, then ``-2``, ``-3``… until one is not ``taken``."""
    base = slug(title, DERIVED_LENGTH) or "lab"
    name, count = base, 1
    while taken(name):
        count += 1
        name = f"{base}-{count}"
    return name
