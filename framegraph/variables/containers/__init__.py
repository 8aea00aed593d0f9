"""Sequences, dicts and sets."""
