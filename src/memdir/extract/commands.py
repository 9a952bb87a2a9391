"""Commands in general words: what a shell command runs and its shape without one session's
arguments.

A lesson about a command must read the same on every branch and every day, so it is stated with
the command's *shape* (:func:`shape`): the runners in front ("uv run", "npx", "sudo"), the
program, its subcommand and its flags — no flag values, positional arguments, redirections or
filters (``git push --set-upstream origin feat 2>&1 | tail`` → ``git push --set-upstream``).
:func:`program` is what two commands must share for one to be the fix of the other;
:func:`probes` says a command only looks (its failure finds nothing, its success fixes nothing).
"""

from __future__ import annotations

import re
import shlex

_RUNNERS = (("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pnpm", "exec"), ("pdm", "run"))
_SINGLE_RUNNERS = frozenset({"npx", "bunx", "sudo", "uvx", "pipx"})
_SUBCOMMANDS = frozenset(
    [
        "git",
        "npm",
        "pnpm",
        "yarn",
        "cargo",
        "go",
        "docker",
        "mix",
        "kubectl",
        "make",
        "bundle",
        "gh",
        "dotnet",
        "bun",
        "deno",
        "uv",
        "pip",
        "pip3",
        "apt",
        "apt-get",
        "brew",
        "poetry",
        "conda",
        "terraform",
        "helm",
        "systemctl",
        "rails",
        "ruff",
        "pre-commit",
    ]
)


def _words(command: str) -> list[str]:
    step = re.split(r"&&|;|\|\||\|", command)
    last = next((s for s in reversed(step) if s.strip() and not _is_filter(s)), command)
    try:
        words = shlex.split(last)
    except ValueError:
        words = last.split()
    words = [w for w in words if not re.match(r"^\d?>|^<|^\w+=|^&?>\S*$", w)]
    if words[:1] == ["git"]:  # git's own options before the subcommand: -C <dir>, -c <k=v>
        while len(words) > 2 and words[1] in ("-C", "-c"):
            del words[1:3]
    return words


def executables(command: str) -> list[str]:
    """The executables a chained command runs, in order (``git``, ``cmd.exe``), runners, ``cd``
    and output filters aside; the last is the one :func:`shape` names."""
    found = []
    for part in re.split(r"&&|;|\|\||\|", command):
        if not part.strip() or _is_filter(part) or part.split()[0] in ("cd", "pushd"):
            continue
        words = _words(part)
        words = words[_runners(words) :]
        if words:
            found.append(words[0].rsplit("/", 1)[-1].lower())
    return found


def _is_filter(step: str) -> bool:
    head = step.split()[0] if step.split() else ""
    return head in ("tail", "head", "grep", "cat", "tee", "less", "sort", "wc")


def _runners(words: list[str]) -> int:
    """How many of ``words`` are runners in front of the program ("uv run", "npx", "sudo")."""
    i = 0
    while i < len(words):
        if tuple(words[i : i + 2]) in _RUNNERS:
            i += 2
        elif words[i] in _SINGLE_RUNNERS:
            i += 1
        else:
            break
    return i


def shape(command: str) -> str:
    """The command in general words: runner, program, subcommand and flags only."""
    words = _words(command)
    i = _runners(words)
    out = words[:i]
    if i >= len(words):
        return " ".join(out)
    program = words[i]
    if program.startswith("/"):  # an absolute path is one machine's; keep a venv's tail
        venv = re.search(r"(\.?venv/bin/\S+)$", program)
        program = venv.group(1) if venv else program.rsplit("/", 1)[-1]
    out.append(program)
    rest = words[i + 1 :]
    if program.rsplit("/", 1)[-1].startswith("python") and rest[:1] == ["-m"] and len(rest) > 1:
        out += rest[:2]
        rest = rest[2:]
    elif program in _SUBCOMMANDS and rest and not rest[0].startswith("-"):
        out.append(rest[0])
        rest = rest[1:]
        if program in ("npm", "pnpm", "yarn", "bun") and out[-1] == "run" and rest:
            out.append(rest[0])
            rest = rest[1:]
    flags = [w.split("=", 1)[0] for w in rest if re.match(r"^--?[A-Za-z][\w-]*", w)]
    return " ".join(out + list(dict.fromkeys(flags))[:3])


def program(command: str) -> str:
    """What a command runs, runners and interpreters aside (``uv run pytest x`` → ``pytest``,
    ``python tool.py`` → ``tool.py``): the failing and the working command must run the same
    program to prove a fix."""
    words = _words(command)
    words = words[_runners(words) :]
    if words and re.match(r"^(?:\S*/)?python3?(?:\.\d+)?$", words[0]):
        words = words[2:] if words[1:2] == ["-m"] else words[1:]
    if not words:
        return ""
    first = words[0].rsplit("/", 1)[-1]
    if first in _SUBCOMMANDS:
        rest = [x for x in words[1:] if not x.startswith("-")]
        if rest[:1] == ["run"] and first in ("npm", "pnpm", "yarn", "bun"):
            return " ".join([first, *rest[:2]])  # the script is the program
        return " ".join([first, *rest[:1]])
    return first


# Tools that do one job and stand in for each other when one of them is missing or unset.
_FAMILIES = (
    frozenset({"npm", "pnpm", "yarn", "bun"}),
    frozenset({"pip", "pip3"}),
    frozenset({"docker-compose", "podman-compose"}),
)


def stands_in(failed: str, working: str) -> bool:
    """True when ``working`` runs the same job as ``failed`` with another tool of its family
    (``pnpm install`` → ``npm install``): a fix for a tool the machine lacks."""
    f, w = program(failed).split(), program(working).split()
    if not f or not w or f[0] == w[0] or f[1:] != w[1:]:
        return False
    return any(f[0] in family and w[0] in family for family in _FAMILIES)


def prefix(failed: str, working: str) -> str:
    """What the working shape adds in front of the failed one (``uv run``), or ''."""
    f, w = shape(failed).split(), shape(working).split()
    head = f[0] if f else ""
    if head and head in w and w.index(head) > 0:
        return " ".join(w[: w.index(head)])
    return ""


# Read-only probes: a failing one found nothing (exploring, not an error), a working one fixed
# nothing (it only looked). One list for the fix rules and the session notes alike.
_PROBE = re.compile(
    r"^(?:cd\s+\S+\s*&&\s*)?(?:find|ls|which|whereis|type|command\s+-v|locate|cat|head|tail|"
    r"grep|rg|echo|pwd|stat|file|env|printenv|wc|tree|test|"
    r"git\s+(?:status|log|diff|show|branch|rev-parse))\b"
)


def probes(command: str) -> bool:
    """True for a command that only looks (``find``, ``ls``, ``which``, ``git status``)."""
    return bool(_PROBE.match(command.strip()))
