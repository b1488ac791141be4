"""rocefab: declarative lossless RoCEv2 fabrics."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rocefab")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"
