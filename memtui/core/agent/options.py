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
    ``operands``: the other arguments, in order."""

    options: tuple[tuple[str, str | None, str], ...]
    operands: tuple[str, ...]


def _long(spec: CommandSpec, text: str, rest: list[str]) -> tuple[str, str | None]:
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
        return canonical, None
    if eq:
        return canonical, value
    if kind == "required":
        if not rest:
            raise OptionError(f"option '--{matches[0]}' requires an argument")
        return canonical, rest.pop(0)
    return canonical, None


def parse_options(spec: CommandSpec, args: list[str]) -> ParsedOptions:
    """Split ``args`` (without the command name) into options and operands as GNU
    ``getopt_long`` does. Raises :class:`OptionError`."""
    rest = list(args)
    options: list[tuple[str, str | None, str]] = []
    operands: list[str] = []
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            operands.extend(rest)
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            if not spec.permute:
                operands.extend(rest)
                break
            continue
        if arg.startswith("--"):
            canonical, value = _long(spec, arg[2:], rest)
            options.append((canonical, value, arg))
            continue
        cluster = arg[1:]
        for i, letter in enumerate(cluster):
            kind = spec.short.get(letter)
            if kind is None:
                raise OptionError(f"invalid option -- '{letter}'")
            if kind == "none":
                options.append((letter, None, arg))
                continue
            attached = cluster[i + 1 :]
            if attached:
                options.append((letter, attached, arg))
            elif kind == "required":
                if not rest:
                    raise OptionError(f"option requires an argument -- '{letter}'")
                options.append((letter, rest.pop(0), arg))
            else:
                options.append((letter, None, arg))
            break
    return ParsedOptions(tuple(options), tuple(operands))
