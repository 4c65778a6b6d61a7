"""Every instance that ever failed staging or its audit in a live check, audited again on every
run beside the draw."""

from __future__ import annotations

REGRESSIONS: list[tuple[str, int, int, str]] = [
    ("bgp-ibgp", 1, 2353, "a routed link fault judged by the protocol on its link"),
    ("bgp-control", 1, 1688028791, "a steering route-map on a session another fault removed"),
    ("path-mtu", 2, 1287099173, "a path MTU learnt while routing reconverged"),
    ("isis-adjacency", 3, 1195452383, "a readdressed IS-IS port still routed over"),
    ("isis-adjacency", 1, 1860527027, "did not stage; the level it failed at is not known"),
    ("isis-adjacency", 2, 1860527027, "did not stage; the level it failed at is not known"),
    ("static-routing", 1, 532232, "a cut link under another fault's static route"),
]
