"""A2A protocol 0.3 peers for the tests: the environment with the 0.3 SDK, and the scripts that
run in it (a 0.3 client, a 0.3 agent) as subprocesses over real sockets."""
