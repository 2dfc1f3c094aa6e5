"""Foundations every room uses: the injected clock, diagnostics, JavaScript text measures and
bounded reads of files a repository or an agent controls.

May use: nothing else in ``memtui.core``.
"""
