"""Memory stores: every memory dir in play for a project, who read and who wrote each (SPEC §14)."""
