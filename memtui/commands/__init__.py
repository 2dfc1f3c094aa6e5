"""Click commands, one module per area; each is a thin layer over ``memtui.core``."""
