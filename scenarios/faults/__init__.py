"""Fault types, declared once each with `netdojo.scenarios.registry.fault` and grouped by what
they break: `interfaces`, `static`, `ospf`, `multiarea`, `bgp`, `bgp_control`, `ibgp`, `rip`,
`isis`, `hosts`, `acl` and the data-plane ones (`policy_routing`, `pmtu`, `link_perf`); `base`
holds the context injectors draw from and the helpers they share, and `red_herring` the harmless
oddity added at levels 2-3.

Each injector picks a target in the network with the seeded `random.Random` and returns a
`FaultPlan`: the `Fault` (inject and fix as tool calls, hidden tests that hold while it is
active), its `Impact` on forwarding, and functional tests that hold once it is repaired.
Injections use the means an operator would: vtysh configuration lines and `ip` commands.
"""
