"""The agent's sessions: its JSONL transcripts, read tolerantly.

May use: ``base``, ``places``, ``memory``.
"""
