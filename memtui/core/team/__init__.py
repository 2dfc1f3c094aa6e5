"""Shared team memory (``<memory dir>/team/``): importing a sync server's bundle, every key
checked by path safety and every content by the secret scan, as one undoable change.

May use: ``base``, ``places``, ``memory``, ``writes``.
"""
