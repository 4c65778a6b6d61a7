"""The scenario families, one module each, each registering itself. The imports below fix the
order of the established families (the default order of assessments and listings, which
published runs rely on); a new family is a module here and nothing else: the registry finds it
and lists it after them. See docs/adding-a-family.md."""

# isort: off
from netdojo.scenarios.families import static_routing
from netdojo.scenarios.families import ospf_adjacency
from netdojo.scenarios.families import ospf_routing
from netdojo.scenarios.families import bgp_peering
from netdojo.scenarios.families import ospf_multiarea
from netdojo.scenarios.families import bgp_control
from netdojo.scenarios.families import bgp_ibgp
from netdojo.scenarios.families import bgp_policy
from netdojo.scenarios.families import acl_firewall
from netdojo.scenarios.families import static_build
from netdojo.scenarios.families import ospf_build
from netdojo.scenarios.families import ospf_path_build
from netdojo.scenarios.families import bgp_transit_build
from netdojo.scenarios.families import bgp_exit_build
from netdojo.scenarios.families import bgp_build
from netdojo.scenarios.families import acl_build
from netdojo.scenarios.families import host_config
# isort: on

__all__ = [
    "acl_build",
    "acl_firewall",
    "bgp_build",
    "bgp_control",
    "bgp_exit_build",
    "bgp_ibgp",
    "bgp_peering",
    "bgp_policy",
    "bgp_transit_build",
    "host_config",
    "ospf_adjacency",
    "ospf_build",
    "ospf_multiarea",
    "ospf_path_build",
    "ospf_routing",
    "static_build",
    "static_routing",
]
