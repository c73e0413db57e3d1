"""The package version (imported by modules that record provenance)."""

__version__ = "0.1.0"
