"""Label selectors: matchLabels and the four matchExpressions operators, as the API defines them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from netdojo.labs.k8s.selectors import LabelSelector

WEB = {"app": "web", "tier": "front"}
DB = {"app": "db"}
BARE: dict[str, str] = {}


def _selector(spec: dict[str, object]) -> LabelSelector:
    return LabelSelector.model_validate(spec)


@pytest.mark.parametrize("spec", [{}, {"matchLabels": {}}, {"matchExpressions": []}])
def test_an_empty_selector_matches_everything(spec: dict[str, object]) -> None:
    selector = _selector(spec)
    assert selector.is_empty
    assert all(selector.matches(labels) for labels in (WEB, DB, BARE))


def test_match_labels_need_every_pair() -> None:
    selector = _selector({"matchLabels": {"app": "web", "tier": "front"}})
    assert selector.matches(WEB)
    assert not selector.matches({"app": "web"})
    assert not selector.matches(DB)


@pytest.mark.parametrize(
    ("operator", "values", "expected"),
    [
        ("In", ["web", "api"], (True, False, False)),
        ("NotIn", ["web"], (False, True, True)),  # NotIn matches a pod without the key
        ("Exists", None, (True, True, False)),
        ("DoesNotExist", None, (False, False, True)),
    ],
)
def test_operators(operator: str, values: list[str] | None, expected: tuple[bool, ...]) -> None:
    requirement: dict[str, object] = {"key": "app", "operator": operator}
    if values is not None:
        requirement["values"] = values
    selector = _selector({"matchExpressions": [requirement]})
    assert tuple(selector.matches(labels) for labels in (WEB, DB, BARE)) == expected


def test_labels_and_expressions_are_anded() -> None:
    selector = _selector(
        {
            "matchLabels": {"tier": "front"},
            "matchExpressions": [
                {"key": "app", "operator": "In", "values": ["web", "db"]},
                {"key": "env", "operator": "DoesNotExist"},
            ],
        }
    )
    assert selector.matches(WEB)
    assert not selector.matches(DB)
    assert not selector.matches({**WEB, "env": "prod"})


def test_in_with_an_empty_value_needs_the_key() -> None:
    selector = _selector({"matchExpressions": [{"key": "app", "operator": "In", "values": [""]}]})
    assert selector.matches({"app": ""})
    assert not selector.matches(BARE)


@pytest.mark.parametrize(
    "requirement",
    [
        {"key": "app", "operator": "In"},
        {"key": "app", "operator": "NotIn", "values": []},
        {"key": "app", "operator": "Exists", "values": ["web"]},
        {"key": "app", "operator": "Matches", "values": ["web"]},
        {"key": "", "operator": "Exists"},
    ],
)
def test_invalid_requirements_are_refused(requirement: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        _selector({"matchExpressions": [requirement]})


def test_unknown_selector_fields_are_refused() -> None:
    with pytest.raises(ValidationError):
        _selector({"matchLabel": {"app": "web"}})
