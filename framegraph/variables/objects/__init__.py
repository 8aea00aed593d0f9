"""User classes and their instances."""
