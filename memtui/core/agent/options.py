"""Command-line options parsed the way the commands themselves parse them: GNU ``getopt_long``.

The Bash tool must judge ``file --comp -m X`` as ``file`` will run it: GNU tools accept any
unambiguous prefix of a long option (``--comp`` is ``--compile``), ``--opt=value``, the value
as the next argument, clusters of short options (``-5f``), a short option's value attached
(``-n5``), options after operands (GNU permutes), ``--`` ending the options and ``-`` as an
operand. Python's ``getopt.gnu_getopt`` has no optional arguments (``--color[=WHEN]``) before
3.13, so this module follows glibc's ``getopt_long`` itself (posix/getopt.c, glibc 2.36):

- a long option matches exactly, else by prefix; several prefix matches are an error unless
  they all mean the same option (``--col`` is ``--color`` and ``--colour`` to grep);
- a required argument is the text after ``=`` or the next argument (whatever it looks like);
  an optional one only after ``=``; ``=`` given to an option without argument is an error;
- in a cluster, a short option with a required argument takes the rest of the cluster or the
  next argument, one with an optional argument only the rest of the cluster.

Every error the real command would report (unknown, ambiguous, missing or extra argument) is
:class:`OptionError`: the Bash tool refuses such a command instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["CommandSpec", "OptionError", "ParsedOptions", "parse_options"]

Arg = Literal["none", "required", "optional"]


class OptionError(ValueError):
    """The command line is one the command itself would refuse."""


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """A command's options as its ``getopt_long`` knows them.

    ``short``: option letter → argument kind; ``long``: long name → (argument kind, the
    option it means — the short letter or the long name itself, so that ``-C`` and
    ``--compile`` are one option). ``permute``: GNU order (options after operands too)."""

    short: dict[str, Arg] = field(default_factory=dict)
    long: dict[str, tuple[Arg, str]] = field(default_factory=dict)
    permute: bool = True


@dataclass(frozen=True, slots=True)
class ParsedOptions:
    """``options``: (canonical option, value or ``None``, the argument as written) in order;
    ``operands``: the other arguments, in order. Where each came from, as indices into the
    parsed ``args``: ``operand_at[k]`` is the argument of ``operands[k]``; ``value_at[k]`` is
    ``(argument index, offset)`` of the value of ``options[k]`` (``--x=v``: the text after
    ``=``; ``-nv``: after the letter; a separate argument: offset 0), ``None`` without one."""

    options: tuple[tuple[str, str | None, str], ...]
    operands: tuple[str, ...]
    operand_at: tuple[int, ...] = ()
    value_at: tuple[tuple[int, int] | None, ...] = ()


def _long(spec: CommandSpec, text: str, args: list[str], nxt: int) -> tuple[str, str | None, tuple[int, int] | None]:
    """Option ``--text`` (argument ``nxt - 1``): its canonical name, value and the value's
    place (``(nxt, 0)`` when it is the next argument, which the caller then skips)."""
    name, eq, value = text.partition("=")
    if name in spec.long:
        matches = [name]
    else:
        matches = [n for n in spec.long if n.startswith(name)]
    if not matches:
        raise OptionError(f"unrecognized option '--{name}'")
    if len({spec.long[n] for n in matches}) > 1:
        raise OptionError(f"option '--{name}' is ambiguous; possibilities: {' '.join('--' + n for n in sorted(matches))}")
    kind, canonical = spec.long[matches[0]]
    if kind == "none":
        if eq:
            raise OptionError(f"option '--{matches[0]}' doesn't allow an argument")
        return canonical, None, None
    if eq:
        return canonical, value, (nxt - 1, 2 + len(name) + 1)
    if kind == "required":
        if nxt >= len(args):
            raise OptionError(f"option '--{matches[0]}' requires an argument")
        return canonical, args[nxt], (nxt, 0)
    return canonical, None, None


def parse_options(spec: CommandSpec, args: list[str]) -> ParsedOptions:
    """Split ``args`` (without the command name) into options and operands as GNU
    ``getopt_long`` does. Raises :class:`OptionError`."""
    options: list[tuple[str, str | None, str]] = []
    value_at: list[tuple[int, int] | None] = []
    operands: list[str] = []
    operand_at: list[int] = []
    i, n = 0, len(args)
    while i < n:
        arg = args[i]
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            operand_at.extend(range(i, n))
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            operand_at.append(i - 1)
            if not spec.permute:
                operands.extend(args[i:])
                operand_at.extend(range(i, n))
                break
            continue
        if arg.startswith("--"):
            canonical, value, at = _long(spec, arg[2:], args, i)
            options.append((canonical, value, arg))
            value_at.append(at)
            if at is not None and at[0] == i:
                i += 1
            continue
        cluster = arg[1:]
        for k, letter in enumerate(cluster):
            kind = spec.short.get(letter)
            if kind is None:
                raise OptionError(f"invalid option -- '{letter}'")
            if kind == "none":
                options.append((letter, None, arg))
                value_at.append(None)
                continue
            attached = cluster[k + 1 :]
            if attached:
                options.append((letter, attached, arg))
                value_at.append((i - 1, k + 2))
            elif kind == "required":
                if i >= n:
                    raise OptionError(f"option requires an argument -- '{letter}'")
                options.append((letter, args[i], arg))
                value_at.append((i, 0))
                i += 1
            else:
                options.append((letter, None, arg))
                value_at.append(None)
            break
    return ParsedOptions(tuple(options), tuple(operands), tuple(operand_at), tuple(value_at))
