"""Kubernetes NetworkPolicy: the objects, their compilation into per-pod allow rules, an evaluator
over those rules, and their rendering as iptables rules for one pod's network namespace."""
