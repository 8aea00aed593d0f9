"""Iterators and generators."""
