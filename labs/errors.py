"""The lab runtime's errors, under the shared `NetdojoError`."""

from netdojo.errors import NetdojoError


class PrerequisiteError(NetdojoError):
    """Something the machine needs (engine, image, plugin, privileges) is missing."""


class LabSpecError(NetdojoError):
    """A lab specification is invalid; the message lists every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid lab spec ({len(problems)} problem(s)):\n{lines}")


class LabError(NetdojoError):
    """A live lab could not be deployed, reached or torn down."""


class UnknownDeviceError(LabError):
    """A device name that the lab does not have."""

    def __init__(self, name: str, valid: list[str]) -> None:
        self.name = name
        self.valid = valid
        super().__init__(f"unknown device {name!r}; devices are: {', '.join(sorted(valid))}")


class EngineUnavailable(LabError):
    """The Docker engine did not answer (stopped, restarting or unreachable)."""
