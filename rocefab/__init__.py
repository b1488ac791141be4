"""rocefab: declarative lossless RoCEv2 fabrics."""

__version__ = "0.1.0"
