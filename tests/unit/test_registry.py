"""The registry: a family is one registered unit, a fault type is declared once, and both can be
added for a while (a test's own family, with its own fault type and tools)."""

from __future__ import annotations

import json
import pkgutil
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

import netdojo.scenarios.families as family_modules
from netdojo.cli import app
from netdojo.scenarios import registry
from netdojo.scenarios.faults import ospf
from netdojo.scenarios.faults.base import FaultContext, FaultPlan, link_down, transit_end
from netdojo.scenarios.generate import generate, plan_instance
from netdojo.scenarios.hidden_tests import LinkParams, LinkUpTest
from netdojo.scenarios.model import (
    KUBERNETES_TOOLS,
    PLANNING_TOOLS,
    SERVICE_TOOLS,
    STANDARD_TOOLS,
    Fault,
    execute,
)
from netdojo.scenarios.registry import Family, FaultType, ScenarioError

runner = CliRunner()


def _unplugged(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A transit link whose cable is pulled at one end."""
    if not (picked := transit_end(ctx)):
        return None
    a, b, iface = picked
    impact, healthy = link_down(ctx, a, b, tag)
    down = LinkUpTest(
        id=f"{tag}:{a}:{iface.name}",
        description=f"{a} {iface.name} is down",
        device=a,
        params=LinkParams(interface=iface.name, expect=False),
    )
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"interface": iface.name},
            inject=[execute(a, f"ip link set dev {iface.name} down")],
            fix=[execute(a, f"ip link set dev {iface.name} up")],
            present=[down],
        ),
        impact,
        healthy,
    )


UNPLUGGED = FaultType("test.unplugged", _unplugged, routing=frozenset({"ospf"}))
SANDBOX = Family(
    name="test-sandbox",
    kind="reactive",
    routing="ospf",
    shapes={1: ("ring",)},
    summary="A ring of OSPF routers with a cable pulled.",
    faults=(UNPLUGGED,),
    levels=(1,),
    tools=(*STANDARD_TOOLS, "kubectl"),
)


def _listed() -> dict[str, dict[str, object]]:
    result = runner.invoke(app, ["scenarios", "list", "--json"])
    assert result.exit_code == 0, result.output
    return {f["name"]: f for f in json.loads(result.output)["families"]}


def test_a_family_registered_for_a_while_generates_and_is_listed() -> None:
    with registry.registered(SANDBOX) as family:
        assert registry.family("test-sandbox") is family
        assert registry.fault_type("test.unplugged") is UNPLUGGED
        scenario = generate("test-sandbox", 1, 7)
        assert scenario == generate("test-sandbox", 1, 7)
        assert {f.type for f in scenario.hidden.faults} == {"test.unplugged"}
        assert scenario.hidden.targets and scenario.public.brief
        listed = _listed()
        assert listed["test-sandbox"] == {
            "name": "test-sandbox",
            "kind": "reactive",
            "types": ["test.unplugged"],
            "levels": [1],
        }
        assert list(listed)[-1] == "test-sandbox"
        assert registry.family("test-sandbox").tools[-1] == "kubectl"
        with pytest.raises(ScenarioError, match="levels are: 1"):
            generate("test-sandbox", 2, 7)
    assert "test-sandbox" not in _listed()
    assert "test.unplugged" not in registry.fault_types()
    with pytest.raises(ScenarioError, match="unknown family 'test-sandbox'"):
        generate("test-sandbox", 1, 7)


def test_a_family_that_cannot_be_generated_is_refused_and_leaves_nothing_behind() -> None:
    undeclared = FaultType("test.undeclared", _unplugged)
    with pytest.raises(ScenarioError, match=r"'test\.undeclared' is not registered"):
        registry.register(replace(SANDBOX, faults=(undeclared,)))
    static = replace(SANDBOX, routing="static")
    with (
        pytest.raises(ScenarioError, match="does not occur under static"),
        registry.registered(static),
    ):
        pass
    with (
        pytest.raises(ScenarioError, match="no shapes for levels"),
        registry.registered(replace(SANDBOX, levels=(1, 2))),
    ):
        pass
    with pytest.raises(ScenarioError, match="registered twice"):
        registry.register(registry.family("ospf-adjacency"))
    assert "test-sandbox" not in registry.families()
    assert "test.unplugged" not in registry.fault_types()


def test_a_fault_type_is_drawn_only_where_it_can_occur() -> None:
    network, _ = plan_instance("ospf-adjacency", 1, 3)
    rng = random.Random(5)
    state = rng.getstate()
    ctx = FaultContext(network=network, routing="bgp", rng=rng)
    assert ospf.area_mismatch.draw(ctx) is None
    assert rng.getstate() == state and not ctx.used
    ctx = FaultContext(network=network, routing="ospf", rng=rng)
    plan = ospf.area_mismatch.draw(ctx)
    assert plan is not None and plan.fault.type == "ospf.area_mismatch"


def test_every_family_module_is_in_the_catalogue() -> None:
    modules = {m.name for m in pkgutil.iter_modules(family_modules.__path__)} - {"shapes"}
    assert modules == {name.replace("-", "_") for name in registry.families()}


def test_every_family_gives_the_standard_tools_unless_it_says_otherwise() -> None:
    kubernetes = {"k8s-policy-repair", "k8s-policy-build"}
    planning = {"capacity-planning"}
    services = {"lab-services", "dhcp-relay"}
    tools = {name: f.tools for name, f in registry.families().items()}
    standard = set(tools) - kubernetes - planning - services
    assert all(tools[name] == STANDARD_TOOLS for name in standard)
    assert all(tools[name] == SERVICE_TOOLS for name in services)
    assert all(tools[name] == KUBERNETES_TOOLS for name in kubernetes)
    assert all(tools[name] == PLANNING_TOOLS for name in planning)
    assert STANDARD_TOOLS == (
        "topology", "show", "configure", "execute", "ping", "traceroute", "capture", "submit",
    )  # fmt: skip


def test_a_new_family_module_is_found_with_no_other_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module dropped into the families package registers its family: nothing lists it, and
    it comes after the established families, whose order stays."""
    established = list(registry.families())
    (tmp_path / "extra_family.py").write_text(
        "from dataclasses import replace\n"
        "from netdojo.scenarios import registry\n"
        "registry.register(replace(registry.family('static-routing'), name='test-extra'))\n"
    )
    monkeypatch.setattr(family_modules, "__path__", [*family_modules.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_families", dict(registry.families()))
    try:
        assert list(registry.families()) == [*established, "test-extra"]
        assert generate("test-extra", 1, 4).family == "test-extra"
    finally:
        sys.modules.pop(f"{family_modules.__name__}.extra_family", None)
