"""Evidence on real history: memories written at commit A, checked at a later commit B.

    .venv/bin/python benchmarks/evidence_replay.py --part build   # the repos read while building
    .venv/bin/python benchmarks/evidence_replay.py --part held    # opened once, to report

Repositories: full public histories (``fetch``ed mirrors, not committed), Python so the truth can
be read with :mod:`ast` — a different reader from the checker's ``git grep`` and regexes:
``build`` = pallets/click, encode/httpx; ``held`` = psf/requests, Textualize/rich, python/mypy;
``held2`` = psf/black, pytest-dev/pytest, marshmallow-code/marshmallow.
Pass ``--mirrors DIR`` holding ``<owner>+<name>/repo`` git dirs (the default is where ``fetch``
puts them).

For each repository: commits A on the first-parent history (seeded), B = A plus 100 or 400
first-parent commits. At A, memories about the code as it is then, in the words memories use —
one claim each, from the source at A:

* ``defined``: "`name` is defined in `path`; use it rather than writing a new one."
* ``takes``: "`name` in `path` takes the arguments a, b, c." (argument names in prose)
* ``file``: "The code for the <stem> module lives in `path`."

Each memory file gets the time of A's commit as its write time, exactly as a memory written then.
The truth at B, from ``ast`` of the file at B: ``defined`` holds when that file still defines
the name (top level or in a class); ``takes`` when a definition of it there has the same
argument names; ``file`` when the file exists. The check is ``memdir.evidence.screen(rev=B)``.

Reported per repository: "no longer true" precision and recall of three rules — held back (a
``gone`` anchor the memory relies on), moved or gone (the verdicts that say the memory's claim
no longer reads true as written: held back, or served with a "moved" caveat) and any caveat
(also ``changed``: what it names changed, which may or may not break the claim) — false
holds (still-true memories held back, as a share of the still-true ones), the check's cost per
memory (uncached, p50), and the verdict mix.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import percentile, table
from memdir.evidence import screen

PARTS = {
    "build": ("pallets+click", "encode+httpx"),
    "held": ("psf+requests", "Textualize+rich", "python+mypy"),
    # a second held-out part (issue #37's second session): picked, fetched and run once, after
    # the rules were final, to measure on more than the first part's 9 stale memories
    "held2": ("psf+black", "pytest-dev+pytest", "marshmallow-code+marshmallow"),
}
SPANS = (100, 400)
A_PER_SPAN = 4
MEMORIES_PER_A = 12
_SKIP = ("test", "tests/", "docs/", "doc/", "examples/", "benchmarks/", "scripts/", "setup.py")


@dataclass
class Case:
    kind: str
    text: str
    path: str
    name: str
    args: tuple[str, ...]


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    return out.stdout.decode("utf-8", "replace")


def source(repo: Path, rev: str, path: str) -> str | None:
    out = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True)
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def definitions(text: str) -> dict[str, list[tuple[str, ...]]] | None:
    """name -> argument-name tuples of every def/class of that name (top level or in a class)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, list[tuple[str, ...]]] = {}
    nodes = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            nodes += node.body
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            names = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
            out.setdefault(node.name, []).append(
                tuple(n for n in names if n not in ("self", "cls"))
            )
        elif isinstance(node, ast.ClassDef):
            out.setdefault(node.name, []).append(())
    return out


def cases_at(repo: Path, rev: str, rng: random.Random) -> list[Case]:
    files = [p for p in git(repo, "ls-tree", "-r", "--name-only", rev).splitlines()
             if p.endswith(".py") and not any(s in p for s in _SKIP)]  # fmt: skip
    rng.shuffle(files)
    out: list[Case] = []
    for path in files:
        if len(out) >= MEMORIES_PER_A:
            break
        text = source(repo, rev, path)
        defs = definitions(text) if text else None
        if not defs:
            continue
        public = sorted(n for n in defs if not n.startswith("_") and len(n) > 3)
        if not public:
            continue
        name = rng.choice(public)
        kind = rng.choice(("defined", "defined", "takes", "file"))
        stem = Path(path).stem
        if kind == "takes" and defs[name][0]:
            args = defs[name][0]
            said = ", ".join(args)
            out.append(
                Case(kind, f"`{name}` in `{path}` takes the arguments {said}.", path, name, args)
            )
        elif kind == "file":
            out.append(
                Case(kind, f"The code for the {stem} module lives in `{path}`.", path, "", ())
            )
        else:
            body = f"`{name}` is defined in `{path}`; use it rather than writing a new one."
            out.append(Case("defined", body, path, name, ()))
    return out


def still_true(repo: Path, rev: str, case: Case) -> bool | None:
    text = source(repo, rev, case.path)
    if case.kind == "file":
        return text is not None
    if text is None:
        return False
    defs = definitions(text)
    if defs is None:
        return None  # unparseable at B: no truth, left out
    if case.kind == "defined":
        return case.name in defs
    return case.args in defs.get(case.name, [])


def replay(name: str, mirror: Path, work: Path, seed: int) -> dict[str, Any]:
    repo = work / name
    subprocess.run(["git", "clone", "-q", "--no-checkout", "--shared", str(mirror), str(repo)],
                   check=True)  # fmt: skip
    history = git(repo, "rev-list", "--first-parent", "HEAD").split()
    rng = random.Random(f"{seed}:{name}")
    rows: list[dict[str, Any]] = []
    costs: list[float] = []
    for span in SPANS:
        for _ in range(A_PER_SPAN):
            i = rng.randrange(span, min(len(history), span + 3000))
            a, b = history[i], history[i - span]
            when = int(git(repo, "log", "-1", "--format=%ct", a).strip())
            mems = work / f"mem-{name}-{a[:8]}"
            mems.mkdir(exist_ok=True)
            for n, case in enumerate(cases_at(repo, a, rng)):
                truth = still_true(repo, b, case)
                if truth is None:
                    continue
                path = mems / f"m{span}-{n}.md"
                path.write_text(f"---\nname: m{n}\ndescription: {case.kind}\ntype: project\n---\n"
                                f"{case.text}\n")  # fmt: skip
                os.utime(path, (when, when))
                started = time.perf_counter()
                [checked] = screen([path], repo, None, budget=10.0, rev=b)
                costs.append((time.perf_counter() - started) * 1000)
                ev = checked.evidence
                rows.append({"kind": case.kind, "true": truth, "held": ev.held_back,
                             "outdated": ev.outdated, "flagged": ev.stale,
                             "state": ev.state or "no anchor"})  # fmt: skip
    return {"repo": name, "rows": rows, "costs": costs}


def score(rows: list[dict[str, Any]], rule: str) -> tuple[float, float, int, int]:
    stale = [r for r in rows if not r["true"]]
    said = [r for r in rows if r[rule]]
    hit = sum(1 for r in said if not r["true"])
    precision = hit / len(said) if said else 1.0
    recall = hit / len(stale) if stale else 1.0
    return precision, recall, len(said), len(stale)


def report(results: list[dict[str, Any]]) -> str:
    lines = []
    for res in [*results, {"repo": "all", "rows": [r for x in results for r in x["rows"]],
                           "costs": [c for x in results for c in x["costs"]]}]:  # fmt: skip
        rows = res["rows"]
        true = [r for r in rows if r["true"]]
        hp, hr, hn, stale = score(rows, "held")
        op, orr, on, _ = score(rows, "outdated")
        fp, fr, fn, _ = score(rows, "flagged")
        false_holds = sum(1 for r in true if r["held"])
        states: dict[str, int] = {}
        for r in rows:
            states[r["state"]] = states.get(r["state"], 0) + 1
        lines.append([
            res["repo"], len(rows), stale,
            f"{hp:.2f} / {hr:.2f} ({hn})", f"{op:.2f} / {orr:.2f} ({on})",
            f"{fp:.2f} / {fr:.2f} ({fn})",
            f"{false_holds}/{len(true)} ({100 * false_holds / max(1, len(true)):.1f}%)",
            f"{percentile(res['costs'], 50):.1f}" if res["costs"] else "-",
            ", ".join(f"{k} {v}" for k, v in sorted(states.items())),
        ])  # fmt: skip
    return table(lines, [
        "repository", "memories", "no longer true at B", "held back: precision / recall (n)",
        "moved or gone: P / R (n)", "any caveat: P / R (n)", "false holds",
        "check ms p50 (uncached)", "verdicts",
    ])  # fmt: skip


def by_kind(results: list[dict[str, Any]]) -> str:
    rows = [r for x in results for r in x["rows"]]
    lines = []
    for kind in ("defined", "takes", "file"):
        part = [r for r in rows if r["kind"] == kind]
        hp, hr, _, stale = score(part, "held")
        op, orr, _, _ = score(part, "outdated")
        fp, fr, _, _ = score(part, "flagged")
        lines.append(
            [
                kind,
                len(part),
                stale,
                f"{hp:.2f} / {hr:.2f}",
                f"{op:.2f} / {orr:.2f}",
                f"{fp:.2f} / {fr:.2f}",
            ]
        )
    return table(lines, ["claim", "memories", "no longer true", "held back P / R",
                         "moved or gone P / R", "any caveat P / R"])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=tuple(PARTS), default="build")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="memdir-replay-"))
    try:
        results = [replay(n, args.mirrors / n / "repo", work, args.seed) for n in PARTS[args.part]]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"part: {args.part} (seed {args.seed})\n")
    print(report(results))
    print()
    print(by_kind(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
