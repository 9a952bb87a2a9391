"""A fix the session proved, written as the lesson a colleague would keep.

The session saw a command fail for an environmental reason and another command (or the same one,
after a step) then work. The lesson is stated in general words — which kind of failure, what to
run instead, when — never with that session's branch, commit message, paths or output: those go
into the evidence line, which the body keeps under **Why:** (:mod:`memdir.extract.form`).

Commands are reduced to their shape (:func:`memdir.extract.commands.shape`: runner, program,
subcommand, flags — ``git push --set-upstream origin feat`` → ``git push --set-upstream``), so
four sessions on four branches give one lesson. Each known
kind of failure (:data:`KINDS`) has its own wording; any other gets the general "use W where F
fails" form. A fix that bypasses a check (``--no-verify``) is never a lesson.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir.extract.commands import executables, probes, program, shape
from memdir.extract.commands import prefix as runner_prefix
from memdir.extract.rules import Candidate
from memdir.model import MemoryType

_FORMATTER = re.compile(
    r"\b(?:black|ruff\s+format|ruff\s+check\s+--fix|isort|prettier|gofmt|cargo\s+fmt|rustfmt|"
    r"(?:npm|pnpm|yarn)\s+(?:run\s+)?(?:format|fmt|lint:fix)|pre-commit\s+run|mix\s+format|"
    r"clang-format|biome\s+format|eslint\s+--fix)\b"
)
_HOOK_ID = re.compile(
    r"- hook id: (?P<id>[\w.-]+)|^(?P<id2>[\w][\w .-]{1,30}?)\.{3,}\s*Failed", re.M
)
_BYPASS = re.compile(r"--no-verify|\bgit\s+commit\b.*\s-n\b|\bSKIP=|HUSKY=0|--force\b")


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of environmental failure: how to recognise it and its cause in general words."""

    id: str
    pattern: re.Pattern[str]
    cause: str


KINDS = (
    Kind("upstream", re.compile(r"has no upstream branch|--set-upstream", re.I), "no upstream"),
    Kind(
        "formatter-hook",
        re.compile(r"files were modified by this hook|would reformat|reformatted \S", re.I),
        "the pre-commit hook reformatted files",
    ),
    Kind(
        "hook",
        re.compile(r"hook (?:failed|rejected|id:)|pre-commit", re.I),
        "the pre-commit hook rejected it",
    ),
    Kind(
        "no-version",
        re.compile(
            r"No version is set for command|No preset version installed for command|"
            r"version \S+ is not installed|is not installed for this project",
            re.I,
        ),
        "the version manager has no version of it set",
    ),
    Kind(
        "missing-tool",
        re.compile(
            r"command not found|not found in PATH|is not installed|not recognized as an internal",
            re.I,
        ),
        "missing from the PATH",
    ),
    Kind(
        "missing-module",
        re.compile(r"No module named|ModuleNotFoundError|Cannot find module", re.I),
        "a module is missing",
    ),
    Kind("permission", re.compile(r"Permission denied|EACCES", re.I), "permission denied"),
    Kind(
        "version",
        re.compile(
            r"requires a different Python|Python \d\.\d+ is not supported|"
            r"engine \"node\" is incompatible",
            re.I,
        ),
        "unsupported interpreter version",
    ),
    Kind("unknown-command", re.compile(r"unknown command", re.I), "unknown command"),
)


def kind_of(output: str) -> Kind | None:
    """The first kind whose pattern the failed command's output matches."""
    return next((k for k in KINDS if k.pattern.search(output)), None)


def _hook_id(output: str) -> str:
    m = _HOOK_ID.search(output)
    name = (m.group("id") or m.group("id2") or "").strip() if m else ""
    return name if re.fullmatch(r"[\w.-]{2,30}", name) else ""


@dataclass(frozen=True, slots=True)
class Proof:
    """What the session showed: ``failed`` failed with ``output``; ``working`` then worked,
    after ``step`` (the last other command or ``edit <file>`` in between, when the working
    command is the failed one again)."""

    failed: str
    output: str
    line: str
    working: str
    step: str | None
    steps: tuple[str, ...] = ()  # every command that ran in between, oldest first

    def formatter(self) -> str:
        """The shape of the formatter run in between (``black``, ``ruff format``), or ''."""
        for command in self.steps:
            for part in re.split(r"&&|;|\|\|", command):
                if _FORMATTER.search(part):
                    return shape(part)
        return ""


def lesson(proof: Proof) -> Candidate | None:
    """The lesson ``proof`` teaches, in general words; None when it teaches none."""
    if _BYPASS.search(proof.working) or (proof.step and _BYPASS.search(proof.step)):
        return None
    kind = kind_of(proof.output)
    if kind is None or not _attributable(proof):
        return None
    f, w = shape(proof.failed), shape(proof.working)
    evidence = _evidence(proof)
    made = _specific(kind, proof, f, w) or _general(kind, proof, f, w)
    if made is None:
        return None
    name, description, why, how = made
    return Candidate(
        "save",
        MemoryType.PROJECT,
        description,
        why,
        "proven-fix",
        proof.line,
        name=name,
        how=how,
        evidence=evidence,
    )


def _attributable(proof: Proof) -> bool:
    """Whether the failure is the failed command's program's: a chain of several programs
    (``python gen.py && cmd.exe /c start out.docx``) is named after its last step, so unless the
    output names that program, an earlier step may have failed (python's PermissionError on a
    file open elsewhere, in a held-out session, became "cmd.exe needs a step first")."""
    ran = executables(proof.failed)
    return len(set(ran)) < 2 or ran[-1] in proof.output.lower()


_Made = tuple[str, str, str, str]


def _specific(kind: Kind, proof: Proof, f: str, w: str) -> _Made | None:
    step = shape(proof.step) if proof.step and not proof.step.startswith("edit ") else ""
    hook = _hook_id(proof.output)
    named = f" ({hook})" if hook else ""
    if kind.id == "upstream" and re.search(r"--set-upstream|(?:^|\s)-u\b", proof.working):
        return (
            "Push a new branch with --set-upstream the first time",
            "The first push of a new branch needs `git push --set-upstream origin <branch>`; "
            "plain `git push` fails while the branch has no upstream",
            "a new branch has no upstream, so git does not know where to push it",
            "On the first push of every new branch run `git push --set-upstream origin "
            "<branch>` (`-u` for short); once the upstream is set, plain `git push` works.",
        )
    if kind.id == "formatter-hook" and program(proof.failed) == "git commit":
        fmt = proof.formatter()
        if fmt:
            return (
                f"Run {fmt} before committing: the pre-commit hook rejects unformatted code",
                f"Commits here run a formatter hook{named} that fails on unformatted files; run "
                f"`{fmt}` and stage its changes before committing",
                "the hook reformats files and fails the commit, so the commit has to be redone",
                f"Before every `git commit`, run `{fmt}` on the changed files and `git add` them; "
                "if the hook still rewrites something, stage it and commit again.",
            )
        return (
            "Stage the hook's changes and commit again when the pre-commit hook reformats files",
            f"Commits here run a pre-commit formatter hook{named} that rewrites files and fails "
            "the commit; `git add` what it changed and commit again",
            "the hook fixes the files itself but fails the commit it ran in",
            "When `git commit` fails with files modified by the hook, review and `git add` those "
            "files, then run the same `git commit` again (never skip the hook).",
        )
    if kind.id == "hook" and program(proof.failed) == "git commit" and step:
        return (
            f"Run {step} before committing: the pre-commit hook checks it",
            f"Commits here go through a pre-commit hook{named} that fails until `{step}` has "
            "run; run it before `git commit`",
            "the hook rejects a commit until that step has been done",
            f"Before `git commit`, run `{step}`; when the hook still fails, read its output, fix "
            "what it names and commit again.",
        )
    prefix = runner_prefix(proof.failed, proof.working)
    if kind.id in ("missing-tool", "missing-module") and prefix:
        tool = shape(proof.failed).split()[0]
        return (
            f"Run {tool} through {prefix} here",
            f"In this project `{tool}` fails on its own ({kind.cause}); run it as "
            f"`{prefix} {tool}`, which uses the project's environment",
            f"the project's tools and packages live in the environment `{prefix}` provides, "
            "not on the PATH",
            f"Wherever a command or a doc says plain `{tool} …`, run `{prefix} {tool} …` instead.",
        )
    tool, path = (f.split() or [""])[0], (w.split() or [""])[0]
    if kind.id == "missing-tool" and "/" in path and "/" not in tool and path.endswith(f"/{tool}"):
        # `swag` not found, `~/go/bin/swag` worked: the tool lives off the PATH; the lesson is
        # the path, not the flags of that one run
        return (
            f"Run {tool} by its full path here",
            f"`{tool}` is not on the PATH here: run it by its full path",
            f"{tool} is installed in {path.rsplit('/', 1)[0]}, which is not on the PATH",
            f"Wherever a command or a doc says plain `{tool} …`, run `{path} …` instead.",
        )
    if kind.id == "permission" and prefix == "sudo":
        return (
            f"{f.split()[0]} needs sudo here",
            f"Here `{f}` fails with permission denied unless run with sudo",
            "the command writes where the user cannot",
            f"Run `sudo {f} …` for this command, and only for it.",
        )
    return None


def _general(kind: Kind, proof: Proof, f: str, w: str) -> _Made | None:
    if w != f:
        return (
            f"Use {w} here where {f} fails",
            f"Here `{f}` fails ({kind.cause}); `{w}` works instead",
            f"`{f}` fails in this environment for a reason outside the code ({kind.cause})",
            f"Whenever `{f}` would be the command, run `{w}` instead.",
        )
    if proof.step is None:
        return None  # the same command passing again proves nothing
    if probes(proof.step):
        # "find / -name go" between two `go build`s looked for the tool; it changed nothing, so
        # what made the retry work (a PATH, a full path) is not in the commands: no lesson
        return None
    if proof.step.startswith("edit "):
        what = "its configuration is fixed"
        how = f"When `{f}` fails with {kind.cause}, look at the configuration before retrying."
    else:
        what = f"`{shape(proof.step)}` has run"
        how = f"Run `{shape(proof.step)}` first whenever `{f}` is needed here."
    return (
        f"{f} needs a step first here",
        f"Here `{f}` fails ({kind.cause}) until {what}",
        f"`{f}` depends on a step the environment does not do by itself",
        how,
    )


def _evidence(proof: Proof) -> str:
    failed, working = _short(proof.failed), _short(proof.working)
    said = f'`{failed}` failed ("{proof.line}")'
    if proof.working == proof.failed and proof.step:
        return f"{said}, then passed after `{_short(proof.step)}`"
    return f"{said} and `{working}` worked"


def _short(command: str, limit: int = 80) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
