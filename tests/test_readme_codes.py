"""Every code the core can emit is in the README's "Diagnostic codes" section.

The codes are collected from the core's source, not listed here: every string constant (or
either branch of a conditional) that reaches a ``code`` — the ``code`` argument of any
function or class of ``memtui.core`` that takes one (``Diagnostic``, the doctor's and the
dream's ``Finding``, ``ToolOutcome``, ``UnsafePathError``, ``RejectedKey``, ``Trap``,
``MemoryDirProblem``…, exceptions inheriting a ``code`` from their base included), a
variable named ``code``, and the keys of a module-level table named ``*_CODES``. A name
imported from another module resolves to the definition there, so two classes called
``Finding`` keep their own argument positions.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "memtui" / "core"
CODE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _code_index(args: ast.arguments, method: bool) -> int | None:
    """The position of ``code`` among the positional parameters (``self`` dropped), ``-1``
    when it is keyword-only, ``None`` when there is none."""
    names = [a.arg for a in [*args.posonlyargs, *args.args]][1 if method else 0:]
    if "code" in names:
        return names.index("code")
    return -1 if any(a.arg == "code" for a in args.kwonlyargs) else None


def _strings(node: ast.AST | None) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _strings(value)


@functools.cache
def core_codes() -> dict[str, str]:
    """code -> one place in ``memtui/core`` that emits it."""
    trees = {_module(p): (p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(CORE.rglob("*.py"))}
    takes: dict[tuple[str, str], int] = {}  # (module, name) -> position of `code`
    bases: dict[tuple[str, str], list[str]] = {}
    for mod, (_, tree) in trees.items():
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                index = _code_index(node.args, method=False)
                if index is not None:
                    takes[(mod, node.name)] = index
            elif isinstance(node, ast.ClassDef):
                bases[(mod, node.name)] = [b.id for b in node.bases if isinstance(b, ast.Name)]
                fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
                init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
                index = _code_index(init.args, method=True) if init is not None else (fields.index("code") if "code" in fields else None)
                if index is not None:
                    takes[(mod, node.name)] = index
                for method in node.body:  # a method taking a code (called as self.name(...))
                    if isinstance(method, ast.FunctionDef) and method.name != "__init__":
                        index = _code_index(method.args, method=True)
                        if index is not None:
                            takes[(mod, method.name)] = index
    for _ in range(3):  # exceptions that inherit their base's __init__ (BundleError(TeamImportError))
        for (mod, name), names in bases.items():
            for base in names:
                if (mod, name) not in takes and (mod, base) in takes:
                    takes[(mod, name)] = takes[(mod, base)]
    found: dict[str, str] = {}
    for mod, (path, tree) in trees.items():
        scope = {name: (mod, name) for (m, name) in takes if m == mod}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memtui.core"):
                for alias in node.names:
                    if (node.module, alias.name) in takes:
                        scope[alias.asname or alias.name] = (node.module, alias.name)
        where = f"{path.relative_to(ROOT)}"
        for node in ast.walk(tree):
            hits: list[str] = []
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                target = scope.get(name) or next(((m, n) for (m, n) in takes if n == name and isinstance(func, ast.Attribute)), None)
                if target is not None and 0 <= takes[target] < len(node.args):
                    hits += _strings(node.args[takes[target]])
                hits += [s for kw in node.keywords if kw.arg == "code" for s in _strings(kw.value)]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id.endswith("_CODES") and isinstance(node.value, ast.Dict):
                        hits += [s for key in node.value.keys for s in _strings(key)]
                    elif isinstance(t, ast.Name) and t.id in ("_DOCTOR_ONLY",) and isinstance(node.value, ast.Dict):
                        hits += [s for key in node.value.keys for s in _strings(key)]
                    elif isinstance(t, ast.Name) and t.id == "code":
                        hits += _strings(node.value)
                    elif isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple):
                        hits += [s for tt, vv in zip(t.elts, node.value.elts, strict=False) if isinstance(tt, ast.Name) and tt.id == "code" for s in _strings(vv)]
            for code in hits:
                if CODE.match(code):
                    found.setdefault(code, f"{where}:{getattr(node, 'lineno', 0)}")
    return found


def readme_codes() -> set[str]:
    """The codes in the first column of every table of the README's "Diagnostic codes"
    section (a cell may name several: `` `a` / `b` ``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("### Diagnostic codes")
    end = text.index("\n## ", start)
    cells = [line.split("|")[1] for line in text[start:end].splitlines() if line.startswith("| `")]
    return set(re.findall(r"`([a-z][a-z0-9-]*)`", "\n".join(cells)))


def test_the_collector_sees_codes_of_every_kind() -> None:
    codes = core_codes()
    # a Diagnostic, a code chosen in a conditional, a doctor finding, a dream finding (a second
    # class called Finding), a tool refusal, an unsafe path, an inherited exception's code
    for code in ("frontmatter-parse-error", "import-external-pending", "import-trailing-punctuation", "index-dangling",
                 "index-line-long-kept", "import-cycle", "bash-timeout", "url-encoded-traversal", "bad-json", "unreadable"):
        assert code in codes, code
    assert "orient" not in codes  # a dream phase, not a code


def test_every_code_the_core_emits_is_in_the_readme() -> None:
    missing = {code: where for code, where in core_codes().items() if code not in readme_codes()}
    assert not missing, f"add these codes to README's Diagnostic codes tables: {missing}"


def test_the_readme_names_no_code_the_core_never_emits() -> None:
    assert readme_codes() - set(core_codes()) == set()
