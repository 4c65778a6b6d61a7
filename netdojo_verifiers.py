"""The verifiers taskset ``netdojo-verifiers``: verifiers finds a taskset by a top-level module
that exports it, so this module exports netdojo's taskset and env
(`netdojo.servers.verifiers_env`) under that id::

    vf-eval netdojo-verifiers --env.taskset.family static-routing --env.taskset.level 1
"""

from netdojo.servers.verifiers_env import NetdojoEnv, NetdojoTaskset

__all__ = ["NetdojoEnv", "NetdojoTaskset"]
