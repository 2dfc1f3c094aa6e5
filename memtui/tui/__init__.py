"""The Textual app: one module per pane, widgets/, and the app that switches between panes."""
