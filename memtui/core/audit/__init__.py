"""The agent's own record beside memtui's prediction: what a session actually loaded against
what memtui computes now (``loaded``), how often memtui's recall selectors pick what the agent's
recall picked for the same prompt (``agreement``), and what memory costs in tokens at a session's
start beside what the transcript recorded (``tokens``, ``cost``).

Kept light: each module is imported on its own (recall's selectors pull in numpy and bm25s).
"""
