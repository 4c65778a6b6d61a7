"""netdojo: an arena where AI agents configure and repair live emulated networks."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("netdojo")
except PackageNotFoundError:
    __version__ = "0.0.0+unknown"
