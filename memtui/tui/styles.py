"""Where the ``.tcss`` files are: inside the wheel (``memtui/styles``) or the source tree."""

from __future__ import annotations

from pathlib import Path

import memtui


def styles_dir() -> Path:
    """The directory holding ``app.tcss`` and one ``.tcss`` per pane.

    An installed wheel carries them as ``memtui/styles`` (hatch ``force-include``); a source
    checkout or editable install has them in the top-level ``styles/``.
    """
    package = Path(memtui.__file__).parent
    for candidate in (package / "styles", package.parent / "styles"):
        if (candidate / "app.tcss").is_file():
            return candidate
    raise FileNotFoundError(f"memtui styles not found next to {package}")


def stylesheets(*names: str) -> list[Path]:
    """Paths of the named stylesheets (``"app"`` → ``app.tcss``)."""
    base = styles_dir()
    return [base / f"{name}.tcss" for name in names]
