"""Kubernetes policy tasks: seeded applications, their intended NetworkPolicy, its matrix and
its faults as policy changes (no family is registered from here)."""
