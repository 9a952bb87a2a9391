"""The read-only shell: an allow-list parser for the commands a background agent may run.

Invariant: :func:`parse_read_only` returns a :class:`CommandLine` only when every command in it
is an allow-listed, read-only program with arguments that cannot write, execute other programs or
expand anything; otherwise it raises :class:`ShellRejected` with the reason. The result is run
without a shell (``shell=False``), so what was checked is exactly what executes: no expansion,
redirection or substitution can happen after the check.

Why a parser and not a sandbox: the memory agents only need to look (``ls``, ``grep``, ``cat``),
and a small grammar we fully understand is easier to trust than a general shell we try to
contain. Anything outside that grammar is refused, including things that would be harmless
(``ls *.md`` — use the Glob tool), because "unparseable" must mean "no".

Grammar: ``pipeline (('&&' | '||' | ';') pipeline)*`` where ``pipeline = command ('|' command)*``
and a command is plain words (quoted with ``'``/``"``/``\\`` as in POSIX sh). Outside single
quotes, ``$`` and backticks are refused; unquoted redirections, globs, braces, parentheses,
``~``, ``#``, ``!``, background ``&`` and newlines are refused; a leading ``NAME=value`` word (an
environment assignment) is refused; program names must be bare allow-listed names.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memdir.errors import ToolDenied


class ShellRejected(ToolDenied):
    """The command is not a read-only command this parser accepts (message says why)."""


@dataclass(frozen=True, slots=True)
class Pipeline:
    """Commands joined by ``|``; each is an argv list."""

    commands: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class CommandLine:
    """Pipelines joined by connectors: ``connectors[i]`` sits between pipelines i and i+1."""

    pipelines: tuple[Pipeline, ...]
    connectors: tuple[str, ...]

    def programs(self) -> list[str]:
        return [argv[0] for p in self.pipelines for argv in p.commands]


_UNQUOTED_REFUSED = {
    "$": "variable or command expansion ($)",
    "`": "command substitution (backticks)",
    ">": "output redirection",
    "<": "input redirection",
    "(": "subshell or process substitution",
    ")": "subshell or process substitution",
    "{": "brace expansion or command grouping",
    "}": "brace expansion or command grouping",
    "*": "unquoted glob (use the Glob tool, or quote it)",
    "?": "unquoted glob (use the Glob tool, or quote it)",
    "[": "unquoted glob (use the Glob tool, or quote it)",
    "!": "history expansion or negation (!)",
    "\n": "multiple lines (newline)",
    "\r": "carriage return",
}
_WORD_START_REFUSED = {"~": "tilde expansion (use an absolute path)", "#": "shell comment (#)"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")


def _split_segments(command: str) -> tuple[list[str], list[str]]:
    """Split at unquoted operators, refusing anything that would expand. Returns (segments, ops)."""
    if "\x00" in command:
        raise ShellRejected("command contains a NUL byte")
    segments: list[str] = []
    ops: list[str] = []
    buf: list[str] = []
    i, n = 0, len(command)
    quote: str | None = None
    while i < n:
        c = command[i]
        if quote == "'":
            buf.append(c)
            quote = None if c == "'" else quote
        elif quote == '"':
            if c == "\\" and i + 1 < n:
                buf.append(command[i : i + 2])
                i += 2
                continue
            if c in "$`":
                raise ShellRejected(f"{_UNQUOTED_REFUSED[c]} inside double quotes")
            buf.append(c)
            quote = None if c == '"' else quote
        elif c == "\\":
            if i + 1 >= n or command[i + 1] in "\n\r":
                raise ShellRejected("trailing backslash or line continuation")
            buf.append(command[i : i + 2])
            i += 2
            continue
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c in _UNQUOTED_REFUSED:
            raise ShellRejected(f"{_UNQUOTED_REFUSED[c]} is not allowed")
        elif c in _WORD_START_REFUSED and (not buf or buf[-1] in " \t"):
            raise ShellRejected(f"{_WORD_START_REFUSED[c]} is not allowed")
        elif c in "|&;":
            op = command[i : i + 2] if command[i : i + 2] in ("&&", "||", "|&", ";;") else c
            if op == "&":
                raise ShellRejected("background execution (&) is not allowed")
            if op in ("|&", ";;"):
                raise ShellRejected(f"operator {op!r} is not allowed")
            segments.append("".join(buf))
            ops.append(op)
            buf = []
            i += len(op)
            continue
        else:
            buf.append(c)
        i += 1
    if quote is not None:
        raise ShellRejected("unterminated quote")
    segments.append("".join(buf))
    return segments, ops


def parse(command: str) -> CommandLine:
    """Parse ``command`` into pipelines of argv lists; refuses anything outside the grammar.

    This is the structural check only; :func:`parse_read_only` adds the allow-list.
    """
    if not command.strip():
        raise ShellRejected("empty command")
    segments, ops = _split_segments(command)
    argvs: list[tuple[str, ...]] = []
    for segment in segments:
        try:
            words = shlex.split(segment, posix=True)
        except ValueError as exc:
            raise ShellRejected(f"cannot parse command: {exc}") from None
        if not words:
            raise ShellRejected("empty command around an operator")
        if _ASSIGNMENT.match(words[0]):
            raise ShellRejected(f"environment assignment prefix {words[0]!r} is not allowed")
        argvs.append(tuple(words))
    pipelines: list[Pipeline] = []
    connectors: list[str] = []
    current: list[tuple[str, ...]] = [argvs[0]]
    for op, argv in zip(ops, argvs[1:], strict=True):
        if op == "|":
            current.append(argv)
        else:
            pipelines.append(Pipeline(tuple(current)))
            connectors.append(op)
            current = [argv]
    pipelines.append(Pipeline(tuple(current)))
    return CommandLine(tuple(pipelines), tuple(connectors))


# --- per-program argument checks -------------------------------------------------------------

ArgCheck = Callable[[Sequence[str]], None]

_FIND_REFUSED = {
    "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
}  # fmt: skip


def _check_find(args: Sequence[str]) -> None:
    for arg in args:
        if arg in _FIND_REFUSED:
            raise ShellRejected(f"find {arg} can modify files or run programs")


def _check_sort(args: Sequence[str]) -> None:
    for arg in args:
        if arg == "--":
            return
        if arg.startswith(("--output", "--compress-program")):
            raise ShellRejected(f"sort {arg.split('=')[0]} writes files or runs programs")
        if arg.startswith("-") and not arg.startswith("--") and "o" in arg[1:]:
            raise ShellRejected("sort -o writes to a file")


_UNIQ_WITH_VALUE = {"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}


def _check_uniq(args: Sequence[str]) -> None:
    operands = 0
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
        elif arg in _UNIQ_WITH_VALUE:
            skip_next = True
        elif arg == "-" or not arg.startswith("-"):
            operands += 1
    if operands > 1:
        raise ShellRejected("uniq with an OUTPUT file argument writes to it")


def _refuse_options(program: str, refused: Sequence[str], why: str) -> ArgCheck:
    def check(args: Sequence[str]) -> None:
        for arg in args:
            if arg == "--":
                return
            for opt in refused:
                long_hit = opt.startswith("--") and (arg == opt or arg.startswith(opt + "="))
                # A short option can hide in a cluster ("-us" is "-u -s"); fail closed on any.
                short_hit = (
                    not opt.startswith("--")
                    and arg.startswith("-")
                    and not arg.startswith("--")
                    and opt[1] in arg[1:]
                )
                if long_hit or short_hit:
                    raise ShellRejected(f"{program} {opt} {why}")

    return check


def _no_check(args: Sequence[str]) -> None:
    return None


ALLOWED_PROGRAMS: dict[str, ArgCheck] = {
    "cat": _no_check,
    "head": _no_check,
    "tail": _refuse_options("tail", ["-f", "-F", "--follow", "--retry"], "never finishes"),
    "wc": _no_check,
    "stat": _no_check,
    "ls": _no_check,
    "find": _check_find,
    "grep": _no_check,
    "egrep": _no_check,
    "fgrep": _no_check,
    "rg": _refuse_options("rg", ["--pre"], "runs a preprocessor program"),
    "sort": _check_sort,
    "uniq": _check_uniq,
    "cut": _no_check,
    "tr": _no_check,
    "diff": _no_check,
    "cmp": _no_check,
    "comm": _no_check,
    "nl": _no_check,
    "echo": _no_check,
    "pwd": _no_check,
    "file": _refuse_options("file", ["-C", "--compile"], "writes a compiled magic file"),
    "basename": _no_check,
    "dirname": _no_check,
    "realpath": _no_check,
    "readlink": _no_check,
    "date": _refuse_options("date", ["-s", "--set"], "changes the system clock"),
    "du": _no_check,
    "md5sum": _no_check,
    "sha256sum": _no_check,
    "true": _no_check,
    "false": _no_check,
}


def check_read_only(line: CommandLine) -> None:
    """Raise :class:`ShellRejected` unless every command in ``line`` is allow-listed."""
    for pipeline in line.pipelines:
        for argv in pipeline.commands:
            program, args = argv[0], argv[1:]
            if "/" in program:
                raise ShellRejected(f"program paths are not allowed ({program!r}); use a bare name")
            check = ALLOWED_PROGRAMS.get(program)
            if check is None:
                raise ShellRejected(
                    f"{program!r} is not a read-only command this agent may run "
                    f"(allowed: {', '.join(sorted(ALLOWED_PROGRAMS))})"
                )
            check(args)


def parse_read_only(command: str) -> CommandLine:
    """Parse and allow-list check ``command``; raises :class:`ShellRejected` with the reason."""
    line = parse(command)
    check_read_only(line)
    return line
