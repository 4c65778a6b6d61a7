"""The error base every layer of netdojo shares, and how an error is told in one line."""


class NetdojoError(Exception):
    """Base of every error netdojo raises on purpose; the command line prints its message."""


def describe(exc: BaseException) -> str:
    """One line for an error; a task group's errors by their first."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
