"""A pause of the cyclic garbage collector while a model's objects are made."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def bulk() -> Iterator[None]:
    """Pause the cyclic collector while tens of thousands of small objects are made (a
    model's entities and relations, parsed or generated): it would scan the growing heap again
    and again and find nothing, since a model holds no cycles. That scanning is most of the
    time a level-3 model takes to parse or generate. Nested pauses resume only at the
    outermost."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
