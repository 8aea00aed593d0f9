"""Instances of user subclasses of builtin types."""
