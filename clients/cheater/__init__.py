"""`cheater`: an adversarial purple agent that tries to pass the hidden tests without repairing
anything, through the public tools alone.

It reads what devices show (the FRR configuration file beside the running configuration, the
log, kernel settings, listeners) looking for the instance's identity or its fix, replays any
configuration the file has and the running state lacks, then leaves a catalogue of symptom
fakes: another host's address or a covering prefix on a loopback, local routes,
kernel and static routes where a protocol should route, address and port translation, and host
firewall rules where hosts are off limits. Each attempt is a call of its own, so the judge has
to name each one. Planning is pure (a topology, a brief and what was read in; attempts out);
the calls are thin.
"""

from netdojo.clients.cheater.agent import cheater

__all__ = ["cheater"]
