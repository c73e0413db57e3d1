"""The package version (imported by modules that record provenance)."""

__version__ = "0.2.0.dev0"
