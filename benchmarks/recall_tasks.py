"""Issue #20's part of the recall evaluation: requests that share no word with their memory.

Used by ``benchmarks/recall_eval.py`` (which prints and documents the tables). The data is in
``benchmarks/data/recall_eval.json`` ("no_shared_word", "unrelated", see "about_issue20"): every
third item of each list (index % 3 == 2) is held out — the rules were tuned on the others only —
and each table reports the two parts separately. The benchmark checks the premise itself: a
request that shares a content word (after memdir's stemming and stopwords) with its governing
memory is an error, not a data point.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import memory_text, table, write_if_changed
from memdir import applies_when
from memdir.recall.embed import Embedder
from memdir.recall.lexical import TermAnalyzer
from memdir.recall.local import LocalSelector
from memdir.recall.relevance import DEFAULT_RULE, EvidenceRule, KeepAll, RelevanceRule

BEFORE_RULE = EvidenceRule(weak=0.15, typed_prior=None)


def held_out(i: int) -> bool:
    return i % 3 == 2


def check_premise(data: dict[str, Any]) -> None:
    analyzer = TermAnalyzer()
    memories = {m[0]: m for m in data["memories"]}
    for query, gold, _kind in data["no_shared_word"]:
        for rel in gold:
            _, name, description, _type, body = memories[rel]
            shared = set(analyzer.terms(query)) & set(
                analyzer.terms(f"{name} {description} {body}")
            )
            if shared:
                raise SystemExit(f"{query!r} shares {sorted(shared)} with {rel}")


def write_dir(root: Path, memories: list[list[str]], situations: dict[str, list[str]]) -> None:
    """The memory dir as memdir's writers leave it: each memory with its applies_when list
    (``situations`` from a model where given, else the rules', as ``memdir add`` writes)."""
    shutil.rmtree(root, ignore_errors=True)
    for rel, name, description, type_, body in memories:
        text = memory_text(name, description, body, type_)
        found = situations.get(rel) or applies_when.derive(type_, name, description, body)
        if found:
            extra = "".join(f"  - {json.dumps(s)}\n" for s in found)
            text = text.replace("\n---\n", f"\napplies_when:\n{extra}---\n", 1)
        write_if_changed(root / rel, text)


# Set by recall_eval.py --stage: LocalSelector arguments for the two-stage index (issue #29), used
# for the MiniLM selectors only.
STAGE: dict[str, Any] = {}


def stage_kwargs(embedder: Embedder) -> dict[str, Any]:
    fast = STAGE.get("fast")
    return dict(STAGE) if fast is not None and embedder is getattr(fast, "model", None) else {}


def build(root: Path, cache: Path, embedder: Embedder, *, applies: bool) -> LocalSelector:
    shutil.rmtree(cache, ignore_errors=True)
    sel = LocalSelector(
        root,
        cache,
        embedder=embedder,
        relevance=KeepAll(),
        applies_when=applies,
        **stage_kwargs(embedder),
    )
    sel.refresh()
    return sel


def surfaced(sel: LocalSelector, query: str, rule: RelevanceRule) -> list[str]:
    return [d.filename for d in sel.rank(query, k=20) if rule.drop_reason(d) is None][:5]


def score(
    sel: LocalSelector, old: LocalSelector, data: dict[str, Any], rule: RelevanceRule
) -> dict[str, float]:
    """Shares per part: nsw dev / held-out surfaced, unrelated dev / held-out false, #9 set.

    The #9 set is asked of its own 42 memories (``old``): its "unanswerable" labels were written
    for that dir, and several of the 24 memories added since do govern some of them ("write a
    Dockerfile for nginx" and the pinned-images rule).
    """
    hits: dict[str, list[bool]] = defaultdict(list)
    for i, (query, gold, kind) in enumerate(data["no_shared_word"]):
        hit = any(rel in gold for rel in surfaced(sel, query, rule))
        part = "held" if held_out(i) else "dev"
        hits[f"nsw {part}"].append(hit)
        hits[f"kind {kind} {part}"].append(hit)
    for i, query in enumerate(data["unrelated"]):
        part = "held" if held_out(i) else "dev"
        hits[f"unrelated {part}"].append(bool(surfaced(sel, query, rule)))
    for query, gold in data["answerable"]:
        hits["old answerable"].append(any(rel in gold for rel in surfaced(old, query, rule)))
    for query in data["unanswerable"]:
        hits["old unanswerable"].append(bool(surfaced(old, query, rule)))
    out = {key: sum(v) / len(v) for key, v in hits.items()}
    out["n " + "nsw"] = len(data["no_shared_word"])
    right = hits["nsw dev"] + hits["nsw held"] + hits["old answerable"]
    false = hits["unrelated dev"] + hits["unrelated held"] + hits["old unanswerable"]
    out["overall surfaced"] = sum(right) / len(right)
    out["overall false"] = sum(false) / len(false)
    return out


Arm = tuple[str, LocalSelector, LocalSelector, RelevanceRule]


def arms(
    work: Path, data: dict[str, Any], embedder: Embedder, model_situations: dict[str, list[str]]
) -> list[Arm]:
    """(label, selector, #9-set selector, rule): before #20, rules' applies_when, a model's."""
    root, old_root = work / "tasks" / "memory", work / "tasks" / "memory-42"
    write_dir(root, data["memories"], {})
    write_dir(old_root, data["memories"][:42], {})
    before = build(root, work / "tasks" / "c-before", embedder, applies=False)
    after = build(root, work / "tasks" / "c-after", embedder, applies=True)
    old_before = build(old_root, work / "tasks" / "c42-before", embedder, applies=False)
    old_after = build(old_root, work / "tasks" / "c42-after", embedder, applies=True)
    out: list[Arm] = [
        (
            "before #20: evidence 0.40 / 0.15 / 0.15, no applies_when",
            before,
            old_before,
            BEFORE_RULE,
        ),
        ("no gate (ranking ceiling), rules' applies_when", after, old_after, KeepAll()),
        ("applies_when by rules + intents + type priors (default)", after, old_after, DEFAULT_RULE),
        ("intents off (type priors only)", after, old_after, EvidenceRule(intent_prior=None)),
        ("intent prior 0.00", after, old_after, EvidenceRule(intent_prior=0.0)),
        ("intent prior 0.10", after, old_after, EvidenceRule(intent_prior=0.10)),
        ("priors 0.15 / 0.30 / 0.00", after, old_after, EvidenceRule(typed_prior=0.15)),
    ]
    if model_situations:
        model_root = work / "tasks" / "memory-model"
        write_dir(model_root, data["memories"], model_situations)
        old_model_root = work / "tasks" / "memory-model-42"
        write_dir(old_model_root, data["memories"][:42], model_situations)
        model = build(model_root, work / "tasks" / "c-model", embedder, applies=True)
        old_model = build(old_model_root, work / "tasks" / "c42-model", embedder, applies=True)
        out.append(("model: no gate (ranking ceiling)", model, old_model, KeepAll()))
        out.append(
            (
                "applies_when by a capable model (default rule)",
                model,
                old_model,
                DEFAULT_RULE,
            )
        )
    return out


def tables(work: Path, data: dict[str, Any], embedder: Embedder, model: dict[str, Any]) -> str:
    check_premise(data)
    results = [
        (label, score(sel, old, data, rule))
        for label, sel, old, rule in arms(work, data, embedder, model)
    ]
    n_dev = sum(not held_out(i) for i in range(len(data["no_shared_word"])))
    n_held = len(data["no_shared_word"]) - n_dev
    u_held = sum(held_out(i) for i in range(len(data["unrelated"])))
    u_dev = len(data["unrelated"]) - u_held
    head = [
        "rule",
        f"no-shared-word surfaced: dev ({n_dev})",
        f"held-out ({n_held})",
        f"unrelated surfacing anything: dev ({u_dev})",
        f"held-out ({u_held})",
        f"#9 set hit@5 ({len(data['answerable'])}, its 42 memories)",
        f"#9 set false ({len(data['unanswerable'])})",
        "overall surfaced",
        "overall false",
    ]
    keys = [
        "nsw dev",
        "nsw held",
        "unrelated dev",
        "unrelated held",
        "old answerable",
        "old unanswerable",
        "overall surfaced",
        "overall false",
    ]
    main = table([[label, *(f"{r[k]:.3f}" for k in keys)] for label, r in results], head)
    kinds = sorted({k for _, _, k in data["no_shared_word"]})
    kind_rows = []
    for label, r in results:
        if "no gate" in label:
            continue
        row: list[object] = [label]
        for kind in kinds:
            row += [f"{r.get(f'kind {kind} dev', 0):.2f}", f"{r.get(f'kind {kind} held', 0):.2f}"]
        kind_rows.append(row)
    kind_head = ["rule"] + [f"{k} {p}" for k in kinds for p in ("dev", "held-out")]
    return (
        main + "\n\nBy kind (no-shared-word requests surfaced):\n\n" + table(kind_rows, kind_head)
    )
