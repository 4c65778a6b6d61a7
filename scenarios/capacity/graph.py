"""An index over a valid model: containers, children, controllers, aggregate capacity."""

from __future__ import annotations

from collections import defaultdict

from netdojo.scenarios.capacity.schema import Entity, PlanModel, Role, Schema


class Index:
    """Look-ups over one model, built in one pass; the model is not changed."""

    def __init__(self, model: PlanModel, schema: Schema) -> None:
        self.model, self.schema = model, schema
        self.entity: dict[str, Entity] = {entity.name: entity for entity in model.entities}
        role_of = schema.role_map
        self.role: dict[str, Role] = {e.name: role_of[e.kind] for e in model.entities}
        self.by_role: dict[Role, list[str]] = defaultdict(list)
        for name, role in self.role.items():
            self.by_role[role].append(name)
        self.parent: dict[str, str] = {}
        self.children: dict[str, list[str]] = defaultdict(list)
        self.controller: dict[str, str] = {}
        for relation in model.relations:
            if relation.kind == schema.contains:
                self.parent[relation.target] = relation.source
                self.children[relation.source].append(relation.target)
            else:
                self.controller[relation.target] = relation.source
        self._capacity: dict[str, int] = {}
        self.root = self.by_role["root"][0]

    def of_role(self, role: Role) -> list[str]:
        """The entities of ``role``, in the model's order."""
        return self.by_role.get(role, [])

    def children_of(self, name: str, role: Role) -> list[str]:
        return [child for child in self.children[name] if self.role[child] == role]

    def below(self, name: str) -> list[str]:
        """Everything ``name`` contains, directly or not."""
        found, todo = [], list(self.children[name])
        while todo:
            child = todo.pop()
            found.append(child)
            todo.extend(self.children[child])
        return found

    def ancestor(self, name: str, roles: tuple[Role, ...]) -> str | None:
        """The nearest container of ``name`` whose role is one of ``roles``."""
        at = self.parent.get(name)
        while at is not None and self.role[at] not in roles:
            at = self.parent.get(at)
        return at

    def capacity(self, name: str) -> int:
        """The aggregate port capacity of ``name`` in bits per second."""
        known = self._capacity.get(name)
        if known is not None:
            return known
        if self.role[name] == "port":
            value = self.entity[name].attrs[self.schema.capacity_attr]
            assert isinstance(value, int | float)
            total = self.schema.to_bps(value)
        else:
            total = sum(self.capacity(child) for child in self.children[name])
        self._capacity[name] = total
        return total

    def ports_of(self, name: str) -> list[str]:
        return [child for child in self.below(name) if self.role[child] == "port"]
