"""Helpers shared by the tests: workspace builders, a fake Messages API, Pilot helpers."""
