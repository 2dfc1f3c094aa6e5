"""The cascade core stays UI-free: importing it loads neither textual nor rich."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "memtui.core.cascade",
    "memtui.core.cascade.approvals",
    "memtui.core.cascade.discovery",
    "memtui.core.cascade.excludes",
    "memtui.core.cascade.imports",
    "memtui.core.cascade.lazy",
    "memtui.core.cascade.loader",
    "memtui.core.cascade.model",
    "memtui.core.cascade.preprocess",
    "memtui.core.cascade.render",
    "memtui.core.cascade.rules",
]


def test_cascade_modules_import_no_ui_library() -> None:
    for module in MODULES:
        code = f"import sys, {module}; print(sorted(m for m in ('textual', 'rich') if m in sys.modules))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "[]", module
