"""Kubernetes label selectors (``matchLabels`` and ``matchExpressions``) and what they match.

The rules are the API reference's for ``LabelSelector``: the requirements are ANDed; an empty
selector (no labels, no expressions) matches everything; ``In`` needs the key with one of the
values, ``NotIn`` matches when the key is absent or its value is not listed; ``In`` and ``NotIn``
need at least one value, ``Exists`` and ``DoesNotExist`` take none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist"]


class Requirement(BaseModel):
    """One ``matchExpressions`` item."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1)
    operator: Operator
    values: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _values_fit_operator(self) -> Requirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs at least one value ({self.key})")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values ({self.key})")
        return self

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        listed = present and labels[self.key] in (self.values or ())
        return listed if self.operator == "In" else not listed


class LabelSelector(BaseModel):
    """A label selector as a manifest writes it; ``{}`` selects everything."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    match_labels: dict[str, str] | None = Field(default=None, alias="matchLabels")
    match_expressions: tuple[Requirement, ...] | None = Field(
        default=None, alias="matchExpressions"
    )

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, value in (self.match_labels or {}).items():
            if labels.get(key) != value:
                return False
        return all(req.matches(labels) for req in self.match_expressions or ())

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions
