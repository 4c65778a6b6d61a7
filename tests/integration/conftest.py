"""Live-lab tests: each deploys real labs; the session fails if anything is left behind."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from netdojo.labs.reaper import reap
from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.labs.samples import ospf_converged, ospf_ring

from .leftovers import leftovers, new_since


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.lab)


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    before = leftovers()
    yield
    leaked = new_since(before)
    if leaked:
        reap()
    assert not leaked, f"labs left behind: {leaked}"


@pytest.fixture(scope="module")
async def triangle() -> AsyncIterator[LiveLab]:
    """Three FRR routers in an OSPF triangle with two hosts, converged."""
    async with deploy_lab(ospf_ring(3, 2, name="tri"), converged=ospf_converged) as lab:
        yield lab
