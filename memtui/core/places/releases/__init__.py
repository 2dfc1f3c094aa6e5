"""The releases memtui models (data only): the seed design and Claude Code."""
