"""Synthetic environments and data streams (seeded, jittable)."""
