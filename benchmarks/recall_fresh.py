"""The fresh recall sets: memory dirs nobody tuned on, reported apart ("fresh, never tuned").

Used by ``benchmarks/recall_eval.py``. Two data files, each a few project memory dirs asked their
own no-shared-word and unrelated requests:

- ``recall_fresh.json`` (iOS, a Go service on Kubernetes, an ML research repo, a Laravel shop):
  committed before any rule change it could judge; its results were not looked at while tuning,
  but its memories were seen while the cue families were written.
- ``recall_fresh2.json`` (Android, Rails, Terraform on AWS): written after the rules were frozen
  and evaluated once — the blind check.
- ``recall_fresh3.json`` (Django + Celery, Unity, STM32 firmware, a dbt warehouse): written by
  another engineer who never read the rules, the intents or the other sets, and evaluated once,
  after the last rule change (2026-12-01).

With ``benchmarks/data/applies_when_agent.json`` (a capable model's applies_when for every
memory, written blind to the requests) each set is also asked of its dirs as memdir stores them
when the saving agent or a configured model writes the field.

Rules are tuned on the dev part of ``recall_eval.json`` and the #9 set only (docs/benchmarks.md).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import table
from memdir import applies_when
from memdir.recall.embed import Embedder
from memdir.recall.relevance import DEFAULT_RULE, KeepAll, RelevanceRule
from recall_tasks import BEFORE_RULE, build, check_premise, surfaced, write_dir

DATA = Path(__file__).resolve().parent / "data"
SETS = (
    ("recall_fresh.json", "Fresh, never tuned", "fresh"),
    ("recall_fresh2.json", "Blind fresh, written after the rules were frozen", "blind"),
    (
        "recall_fresh3.json",
        "Second blind set, written by another engineer blind to the rules",
        "blind3",
    ),
)
MODEL_LABEL = "applies_when by a capable model (default rule)"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    for spec in data["dirs"].values():
        check_premise(spec)
    return data


def score(
    work: Path,
    data: dict[str, Any],
    embedder: Embedder,
    rule: RelevanceRule = DEFAULT_RULE,
    model: Callable[[str], dict[str, list[str]]] | None = None,
) -> dict[str, dict[str, float]]:
    """Per rule: shares surfaced overall, per dir and per kind, and unrelated surfacing.

    ``model(dir)`` gives that dir's applies_when lists as a model wrote them (stored alone, as
    memdir stores them); with it, two more arms run on a dir written with those lists.
    """
    arms: list[tuple[str, bool, RelevanceRule]] = [
        ("before #20: no applies_when", False, BEFORE_RULE),
        ("no gate (ranking ceiling)", True, KeepAll()),
        ("default rule", True, rule),
    ]
    if model is not None:
        arms += [("model: no gate (ranking ceiling)", True, KeepAll()), (MODEL_LABEL, True, rule)]
    hits: dict[str, dict[str, list[bool]]] = {label: defaultdict(list) for label, _, _ in arms}
    for name, spec in data["dirs"].items():
        root = work / "fresh" / name / "memory"
        write_dir(root, spec["memories"], {})
        if model is not None:
            write_dir(work / "fresh" / name / "memory-model", spec["memories"], model(name))
        for label, applies, rule in arms:
            by_model = label.startswith("model") or label == MODEL_LABEL
            cache = work / "fresh" / name / ("cache-applies" if applies else "cache-before")
            if by_model:
                cache = work / "fresh" / name / "cache-model"
            sel = build(
                root if not by_model else root.with_name("memory-model"),
                cache,
                embedder,
                applies=applies,
            )
            for query, gold, kind in spec["no_shared_word"]:
                hit = any(rel in gold for rel in surfaced(sel, query, rule))
                for key in ("nsw", f"nsw {name}", f"kind {kind}"):
                    hits[label][key].append(hit)
            for query in spec["unrelated"]:
                any_ = bool(surfaced(sel, query, rule))
                hits[label]["unrelated"].append(any_)
                hits[label][f"unrelated {name}"].append(any_)
    return {label: {k: sum(v) / len(v) for k, v in h.items()} for label, h in hits.items()}


def tables(work: Path, embedder: Embedder, model: dict[str, list[str]] | None = None) -> str:
    return "\n\n".join(
        one_set(work / name, name, title, embedder, _model_lists(model, prefix))
        for name, title, prefix in SETS
    )


def _model_lists(
    model: dict[str, list[str]] | None, prefix: str
) -> Callable[[str], dict[str, list[str]]] | None:
    """A dir's model-written lists ("<prefix>-<dir>/<file>" keys), stored as memdir stores a
    model's list: alone (recall reads the rules' situations before it)."""
    if not model:
        return None

    def lists(dir_name: str) -> dict[str, list[str]]:
        data = load(next(f for f, _, p in SETS if p == prefix))
        return {
            rel: applies_when.normalise(model.get(f"{prefix}-{dir_name}/{rel}", []))
            for rel, *_ in data["dirs"][dir_name]["memories"]
        }

    return lists


def one_set(
    work: Path,
    name: str,
    title: str,
    embedder: Embedder,
    model: Callable[[str], dict[str, list[str]]] | None = None,
) -> str:
    data = load(name)
    results = score(work, data, embedder, model=model)
    names = list(data["dirs"])
    n_nsw = sum(len(s["no_shared_word"]) for s in data["dirs"].values())
    n_unrel = sum(len(s["unrelated"]) for s in data["dirs"].values())
    head = [
        "rule",
        f"no-shared-word surfaced ({n_nsw})",
        f"unrelated surfacing anything ({n_unrel})",
    ]
    head += [f"{n}: surfaced / unrelated" for n in names]
    rows = []
    for label, r in results.items():
        row: list[object] = [label, f"{r['nsw']:.3f}", f"{r['unrelated']:.3f}"]
        row += [f"{r[f'nsw {n}']:.2f} / {r[f'unrelated {n}']:.2f}" for n in names]
        rows.append(row)
    kinds = sorted({k for s in data["dirs"].values() for _, _, k in s["no_shared_word"]})
    kind_rows = [
        [label, *(f"{r[f'kind {k}']:.2f}" for k in kinds)]
        for label, r in results.items()
        if "no gate" not in label
    ]
    return (
        f"**{title}** (benchmarks/data/{name}: {len(names)} memory dirs, each asked its own "
        "requests):\n\n"
        + table(rows, head)
        + "\n\nBy kind (no-shared-word requests surfaced):\n\n"
        + table(kind_rows, ["rule", *kinds])
    )
