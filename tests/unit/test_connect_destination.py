"""What `connect` hands its probe as the destination: a Service's name passes only on a
Kubernetes lab and only in the forms a resolver knows; anything else (a shell word among them)
goes to the address lookup, which refuses what is neither an address nor a device."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from netdojo.tools.connect import _address
from netdojo.tools.lab_tools import LabTools, ToolFailure


class _Tools:
    def __init__(self, kubernetes: bool) -> None:
        self.lab = SimpleNamespace(
            spec=SimpleNamespace(kubernetes=object() if kubernetes else None)
        )

    def is_device(self, name: str) -> bool:
        return name == "web"

    async def address_of(self, destination: str) -> str:
        if destination == "web":
            return "10.244.0.10"
        raise ToolFailure(f"destination {destination!r} is neither an IP address nor a device")


def _tools(kubernetes: bool) -> LabTools:
    return cast(Any, _Tools(kubernetes))


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["cart", "cart.shop", "cart.shop.svc.cluster.local"])
async def test_a_service_name_goes_to_the_pods_resolver(name: str) -> None:
    assert await _address(_tools(True), name) == name


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name", ["cart;id", "$(id)", "-e", "cart shop", "Cart", "cart.", "x`id`", "a|b"]
)
async def test_anything_else_is_refused_before_a_shell_sees_it(name: str) -> None:
    with pytest.raises(ToolFailure):
        await _address(_tools(True), name)


@pytest.mark.anyio
async def test_devices_and_addresses_are_looked_up_and_names_only_on_kubernetes() -> None:
    assert await _address(_tools(True), "web") == "10.244.0.10"
    with pytest.raises(ToolFailure):
        await _address(_tools(False), "cart.shop")
