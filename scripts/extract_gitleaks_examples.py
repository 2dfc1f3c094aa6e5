"""Extract gitleaks' own true- and false-positive examples into
``tests/core/memory/gitleaks_examples.json`` (the data of ``test_secret_rules.py``).

gitleaks (MIT) writes, beside each rule of its default config, the strings the rule must and must
not flag: in ``cmd/generate/config/rules/*.go`` each rule function ends with
``utils.Validate(r, tps, fps)``. This script reads those files with tree-sitter's Go grammar and
evaluates the few expressions they use (string literals, ``+``, ``[]string{…}``, ``append``,
``fmt.Sprintf``, ``utils.GenerateSampleSecrets`` and friends, ``for … range`` over literals,
base64 encoders). ``secrets.NewSecret(pattern)`` — a random string matching ``pattern``, drawn by
gitleaks with the Go package reggen — is drawn here with ``rstr.xeger`` from a seeded
``random.Random`` (one seed per rule), so the file is reproducible. A value the evaluator cannot
compute is left out and named in the file's ``not_extracted`` list.

    pip install rstr tree-sitter tree-sitter-go
    python scripts/extract_gitleaks_examples.py GITLEAKS_GIT_DIR [COMMIT]

``GITLEAKS_GIT_DIR`` is a clone (or bare git dir) of github.com/gitleaks/gitleaks; ``COMMIT``
defaults to ``HEAD`` and must be the commit the vendored ``gitleaks.toml`` came from.
"""

from __future__ import annotations

import base64
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import tree_sitter_go
from rstr.xeger import Xeger
from tree_sitter import Language, Node, Parser

OUT = Path(__file__).resolve().parents[1] / "tests" / "core" / "memory" / "gitleaks_examples.json"
RULES_DIR = "cmd/generate/config/rules"
UTILS = "cmd/generate/config/utils"


class Unsupported(Exception):
    """An expression or statement the evaluator does not know."""


class Reggen(Xeger):
    """``rstr``'s generator with reggen's bound for an open repeat (``x*``, ``x+``, ``x{n,}``):
    gitleaks calls ``Generate(1)``, which draws at most one copy past the minimum."""

    def _handle_repeat(self, start_range: int, end_range: int, value: str) -> str:
        from re._constants import MAXREPEAT  # type: ignore[attr-defined]

        if end_range == MAXREPEAT:
            end_range = start_range + 1
        times = self._random.randint(start_range, end_range)
        return "".join("".join(self._handle_state(i) for i in value) for _ in range(times))


def git_show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout


def git_ls(git_dir: str, commit: str, path: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "--name-only", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.endswith(".go") and not line.endswith("_test.go")]


_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"'}


def go_unquote(body: str) -> str:
    """The value of an interpreted Go string literal's body (escapes as the Go spec defines them)."""
    out: list[str] = []
    raw = bytearray()
    i = 0

    def flush() -> None:
        if raw:
            out.append(raw.decode("utf-8", "surrogateescape"))
            raw.clear()

    while i < len(body):
        c = body[i]
        if c != "\\":
            flush()
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _GO_ESCAPES:
            flush()
            out.append(_GO_ESCAPES[n])
            i += 2
        elif n == "x":
            raw.append(int(body[i + 2 : i + 4], 16))
            i += 4
        elif n in "01234567":
            raw.append(int(body[i + 1 : i + 4], 8))
            i += 4
        elif n == "u":
            flush()
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif n == "U":
            flush()
            out.append(chr(int(body[i + 2 : i + 10], 16)))
            i += 10
        else:
            raise Unsupported(f"escape \\{n}")
    flush()
    return "".join(out)


def go_sprintf(fmt: str, args: list[Any]) -> str:
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        verb = m.group(1)
        if verb == "%":
            return "%"
        value = next(it)
        if verb in ("s", "v", "d"):
            return str(value)
        if verb == "q":
            return json.dumps(value)
        raise Unsupported(f"fmt verb %{verb}")

    return re.sub(r"%([%svdq])", one, fmt)


class Interpreter:
    """Evaluates the Go of gitleaks' rule files, one function call at a time."""

    def __init__(self, sources: dict[str, bytes]) -> None:
        self.parser = Parser(Language(tree_sitter_go.language()))
        self.sources = sources
        self.functions: dict[str, tuple[Node, bytes]] = {}  # "utils.Hex" / "rules.GitHubPat"
        self.globals: dict[str, Any] = {}
        self.rng = random.Random(0)
        self.generator = Reggen(self.rng)
        self.trees = {}
        for name, src in sources.items():
            tree = self.parser.parse(src)
            self.trees[name] = tree
            pkg = "utils" if name.startswith(UTILS) else "rules"
            for node in tree.root_node.children:
                if node.type == "function_declaration":
                    self.functions[f"{pkg}.{self.text(node.child_by_field_name('name'), src)}"] = (node, src)
        # package-level ``var`` values (e.g. shared example lists), evaluated lazily
        self.global_nodes: dict[str, tuple[Node, bytes, str]] = {}
        for name, tree in self.trees.items():
            src = sources[name]
            pkg = "utils" if name.startswith(UTILS) else "rules"
            for node in tree.root_node.children:
                if node.type == "var_declaration":
                    for spec in node.named_children:
                        if spec.type != "var_spec":
                            continue
                        names = [c for c in spec.children_by_field_name("name")]
                        value = spec.child_by_field_name("value")
                        if value is not None and len(names) == 1:
                            self.global_nodes[self.text(names[0], src)] = (value.named_children[0], src, pkg)

    @staticmethod
    def text(node: Node, src: bytes) -> str:
        return src[node.start_byte : node.end_byte].decode()

    # --- expressions ------------------------------------------------------------------------

    def expr(self, node: Node, src: bytes, env: dict[str, Any], pkg: str) -> Any:
        t = node.type
        if t == "interpreted_string_literal":
            return go_unquote(self.text(node, src)[1:-1])
        if t == "raw_string_literal":
            return self.text(node, src)[1:-1].replace("\r", "")
        if t == "int_literal":
            return int(self.text(node, src))
        if t in ("true", "false"):
            return t == "true"
        if t == "nil":
            return None
        if t == "parenthesized_expression":
            return self.expr(node.named_children[0], src, env, pkg)
        if t == "identifier":
            name = self.text(node, src)
            if name in env:
                return env[name]
            if name in self.global_nodes:
                if name not in self.globals:
                    gnode, gsrc, gpkg = self.global_nodes[name]
                    self.globals[name] = self.expr(gnode, gsrc, {}, gpkg)
                return self.globals[name]
            raise Unsupported(f"unknown name {name}")
        if t == "binary_expression":
            op = self.text(node.child_by_field_name("operator"), src)
            left = self.expr(node.child_by_field_name("left"), src, env, pkg)
            right = self.expr(node.child_by_field_name("right"), src, env, pkg)
            if op == "+":
                return left + right
            raise Unsupported(f"operator {op}")
        if t == "composite_literal":
            return self.composite(node, src, env, pkg)
        if t == "call_expression":
            return self.call(node, src, env, pkg)
        if t == "selector_expression":
            raise Unsupported(f"selector {self.text(node, src)}")
        if t == "index_expression":
            value = self.expr(node.child_by_field_name("operand"), src, env, pkg)
            index = self.expr(node.child_by_field_name("index"), src, env, pkg)
            return value[index]
        if t == "type_conversion_expression":
            return self.expr(node.child_by_field_name("operand"), src, env, pkg)
        raise Unsupported(f"expression {t}: {self.text(node, src)[:60]}")

    def composite(self, node: Node, src: bytes, env: dict[str, Any], pkg: str) -> Any:
        type_node = node.child_by_field_name("type")
        body = node.child_by_field_name("body")
        type_text = self.text(type_node, src) if type_node is not None else ""
        elements = [c for c in body.named_children if c.type in ("literal_element", "keyed_element")]
        if type_text.startswith("map[") or type_text == "config.Rule" or (elements and elements[0].type == "keyed_element"):
            out: dict[Any, Any] = {}
            for el in elements:
                if el.type != "keyed_element":
                    raise Unsupported("mixed composite")
                key_node, value_node = el.named_children[0], el.named_children[1]
                key_inner = key_node.named_children[0] if key_node.type == "literal_element" else key_node
                key = self.text(key_inner, src) if type_text == "config.Rule" else self.expr(key_inner, src, env, pkg)
                if type_text == "config.Rule" and key != "RuleID":
                    continue  # the rule's other fields are read from gitleaks.toml
                value_inner = value_node.named_children[0] if value_node.type == "literal_element" else value_node
                try:
                    out[key] = self.expr(value_inner, src, env, pkg) if value_inner.type != "literal_value" else self.literal_list(value_inner, src, env, pkg)
                except Unsupported:
                    if type_text != "config.Rule":
                        raise
            return out
        return self.literal_list(body, src, env, pkg)

    def literal_list(self, body: Node, src: bytes, env: dict[str, Any], pkg: str) -> list[Any]:
        out = []
        for el in body.named_children:
            if el.type == "comment":
                continue
            inner = el.named_children[0] if el.type == "literal_element" else el
            out.append(self.literal_list(inner, src, env, pkg) if inner.type == "literal_value" else self.expr(inner, src, env, pkg))
        return out

    def args(self, node: Node, src: bytes, env: dict[str, Any], pkg: str) -> list[Any]:
        out: list[Any] = []
        for a in node.child_by_field_name("arguments").named_children:
            if a.type == "comment":
                continue
            if a.type == "variadic_argument":
                out.extend(self.expr(a.named_children[0], src, env, pkg))
            else:
                out.append(self.expr(a, src, env, pkg))
        return out

    def call(self, node: Node, src: bytes, env: dict[str, Any], pkg: str) -> Any:
        fn = self.text(node.child_by_field_name("function"), src)
        if fn in ("regexp.MustCompile", "MustCompile"):
            return ("regexp", self.args(node, src, env, pkg)[0])
        args = self.args(node, src, env, pkg)
        if fn == "append":
            return list(args[0] or []) + args[1:]
        if fn == "secrets.NewSecret":
            try:
                return self.generator.xeger(args[0])
            except Exception as exc:  # a Go construct Python's parser does not read
                raise Unsupported(f"NewSecret({args[0]!r}): {exc}") from exc
        if fn == "fmt.Sprintf":
            return go_sprintf(args[0], args[1:])
        if fn == "strings.Repeat":
            return args[0] * args[1]
        if fn == "strings.ToUpper":
            return args[0].upper()
        if fn == "strings.ToLower":
            return args[0].lower()
        if fn == "strings.Join":
            return args[1].join(args[0])
        if fn == "len":
            return len(args[0])
        if fn == "make":
            return []
        if fn in ("b64.StdEncoding.EncodeToString", "base64.StdEncoding.EncodeToString"):
            return base64.b64encode(_bytes(args[0])).decode()
        if fn in ("b64.RawStdEncoding.EncodeToString", "base64.RawStdEncoding.EncodeToString"):
            return base64.b64encode(_bytes(args[0])).decode().rstrip("=")
        if fn in ("b64.URLEncoding.EncodeToString", "base64.URLEncoding.EncodeToString"):
            return base64.urlsafe_b64encode(_bytes(args[0])).decode()
        if fn in ("b64.RawURLEncoding.EncodeToString", "base64.RawURLEncoding.EncodeToString"):
            return base64.urlsafe_b64encode(_bytes(args[0])).decode().rstrip("=")
        if fn == "utils.GenerateSampleSecrets":
            return self.sample_secrets(args[0], args[1])
        if fn == "utils.GenerateUniqueTokenRegex" or fn == "utils.GenerateSemiGenericRegex":
            return ("regexp", None)
        qualified = fn if "." in fn else f"{pkg}.{fn}"
        if qualified in self.functions:
            return self.run_function(qualified, args)
        raise Unsupported(f"call {fn}")

    def sample_secrets(self, identifier: str, secret: str) -> list[str]:
        """``utils.GenerateSampleSecrets``: its ``samples`` templates filled in (as generate.go
        does, with ``strings.NewReplacer``)."""
        node, src = self.functions["utils.GenerateSampleSecrets"]
        samples = None
        for child in _walk(node):
            if child.type == "short_var_declaration" and self.text(child.child_by_field_name("left"), src) == "samples":
                samples = self.expr(child.child_by_field_name("right").named_children[0], src, {}, "utils")
        if samples is None:
            raise Unsupported("GenerateSampleSecrets has no samples map")
        out = []
        for template in samples.values():
            out.append(re.sub(r"\{([iIs])\}", lambda m: {"i": identifier, "I": identifier.upper(), "s": secret}[m.group(1)], template))
        return out

    # --- statements ---------------------------------------------------------------------------

    def run_function(self, name: str, args: list[Any]) -> Any:
        node, src = self.functions[name]
        pkg = name.split(".")[0]
        env: dict[str, Any] = {}
        params = node.child_by_field_name("parameters")
        names = [self.text(n, src) for p in params.named_children for n in p.children_by_field_name("name")]
        env.update(zip(names, args))
        result = self.block(node.child_by_field_name("body"), src, env, pkg)
        return result[1] if result else None

    def block(self, body: Node, src: bytes, env: dict[str, Any], pkg: str) -> tuple[str, Any] | None:
        for stmt in _statements(body):
            res = self.statement(stmt, src, env, pkg)
            if res is not None:
                return res
        return None

    def statement(self, stmt: Node, src: bytes, env: dict[str, Any], pkg: str) -> tuple[str, Any] | None:
        t = stmt.type
        if t == "comment":
            return None
        if t in ("short_var_declaration", "assignment_statement"):
            left = [c for c in stmt.child_by_field_name("left").named_children]
            right = [c for c in stmt.child_by_field_name("right").named_children]
            if len(left) != len(right):
                raise Unsupported("multi-value assignment")
            for l_node, r_node in zip(left, right):
                name = self.text(l_node, src)
                try:
                    env[name] = self.expr(r_node, src, env, pkg)
                except Exception as exc:
                    env[name] = _Failed(f"{type(exc).__name__}: {exc}")
            return None
        if t == "var_declaration":
            specs = [c for child in stmt.named_children for c in (child.named_children if child.type == "var_spec_list" else [child])]
            for spec in specs:
                if spec.type != "var_spec":
                    continue
                value = spec.child_by_field_name("value")
                for n in spec.children_by_field_name("name"):
                    env[self.text(n, src)] = self.expr(value.named_children[0], src, env, pkg) if value is not None else []
            return None
        if t == "return_statement":
            values = [c for c in stmt.named_children]
            if not values:
                return ("return", None)
            inner = values[0].named_children[0] if values[0].type == "expression_list" else values[0]
            return ("return", self.expr(inner, src, env, pkg))
        if t == "for_statement":
            clause = next((c for c in stmt.named_children if c.type == "range_clause"), None)
            if clause is None:
                raise Unsupported("for without range")
            target = self.expr(clause.child_by_field_name("right"), src, env, pkg)
            left = clause.child_by_field_name("left")
            names = [self.text(n, src) for n in left.named_children] if left is not None else []
            items = list(target.items()) if isinstance(target, dict) else list(enumerate(target))
            for key, value in items:
                if names:
                    env[names[0]] = key
                if len(names) > 1:
                    env[names[1]] = value
                res = self.block(stmt.child_by_field_name("body"), src, env, pkg)
                if res is not None:
                    return res
            return None
        if t == "expression_statement":
            self.expr(stmt.named_children[0], src, env, pkg)
            return None
        raise Unsupported(f"statement {t}")


class _Failed:
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


def _statements(body: Node) -> list[Node]:
    """A block's statements (tree-sitter puts them in a ``statement_list`` beside comments)."""
    out: list[Node] = []
    for child in body.named_children:
        out.extend(child.named_children if child.type == "statement_list" else [child])
    return out


def _walk(node: Node):
    yield node
    for c in node.children:
        yield from _walk(c)


def rule_examples(interp: Interpreter, name: str, rule_ids: set[str]) -> tuple[str, list[str], list[str], list[str]] | None:
    """(rule id, true positives, false positives, reasons for values left out) of one rule
    function, or ``None`` for a function that defines no rule."""
    node, src = interp.functions[name]
    body = node.child_by_field_name("body")
    validate = None
    for child in _walk(body):
        if child.type == "call_expression" and interp.text(child.child_by_field_name("function"), src) in ("utils.Validate", "utils.ValidateWithPaths"):
            validate = child
    if validate is None:
        return None
    interp.rng.seed(name)
    env: dict[str, Any] = {}
    missing: list[str] = []
    for stmt in _statements(body):
        if stmt.type == "return_statement":
            break
        try:
            interp.statement(stmt, src, env, "rules")
        except Exception as exc:
            missing.append(f"{interp.text(stmt, src)[:80]!r}: {exc}")
    arg_nodes = [a for a in validate.child_by_field_name("arguments").named_children if a.type != "comment"]
    rule = env.get(interp.text(arg_nodes[0], src))
    rule_id = rule.get("RuleID") if isinstance(rule, dict) else None
    if rule_id not in rule_ids:
        return None
    lists = []
    for a in arg_nodes[1:3]:
        try:
            value = interp.expr(a, src, env, "rules")
        except Exception as exc:
            missing.append(f"{interp.text(a, src)}: {exc}")
            value = []
        if isinstance(value, _Failed):
            missing.append(f"{interp.text(a, src)}: {value.reason}")
            value = []
        if isinstance(value, dict):  # ValidateWithPaths: {path: content}
            value = [{"path": k, "text": v} for k, v in value.items()]
        lists.append([v for v in (value or []) if not isinstance(v, _Failed)])
    return rule_id, lists[0], lists[1], missing


def main() -> int:
    git_dir = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", commit], check=True, capture_output=True, text=True).stdout.strip()
    import tomllib

    rule_ids = {r["id"] for r in tomllib.loads(git_show(git_dir, commit, "config/gitleaks.toml"))["rules"]}
    sources = {f"{RULES_DIR}/{f}": git_show(git_dir, commit, f"{RULES_DIR}/{f}").encode() for f in git_ls(git_dir, commit, RULES_DIR)}
    sources.update({f"{UTILS}/{f}": git_show(git_dir, commit, f"{UTILS}/{f}").encode() for f in git_ls(git_dir, commit, UTILS)})
    interp = Interpreter(sources)
    rules: dict[str, Any] = {}
    not_extracted: dict[str, list[str]] = {}
    for name in sorted(n for n in interp.functions if n.startswith("rules.")):
        got = rule_examples(interp, name, rule_ids)
        if got is None:
            continue
        rule_id, tps, fps, missing = got
        rules[rule_id] = {"function": name.split(".", 1)[1], "true_positives": tps, "false_positives": fps}
        if missing:
            not_extracted[rule_id] = missing
    for rule_id in sorted(rule_ids - rules.keys()):
        not_extracted.setdefault(rule_id, []).append("no rule function with utils.Validate found")
    data = {
        "source": f"github.com/gitleaks/gitleaks at {commit}, {RULES_DIR}/*.go (MIT licence: memtui/core/memory/secret_rules/LICENSE)",
        "how": "scripts/extract_gitleaks_examples.py: literal strings as written; secrets.NewSecret(pattern) drawn with rstr.xeger (random.Random seeded with the rule function's name)",
        "commit": commit,
        "rules": dict(sorted(rules.items())),
        "not_extracted": dict(sorted(not_extracted.items())),
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rules)} rules, {sum(len(r['true_positives']) for r in rules.values())} true positives, "
          f"{sum(len(r['false_positives']) for r in rules.values())} false positives; not extracted: {len(not_extracted)}")
    for rule_id, why in not_extracted.items():
        print(f"  {rule_id}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
