"""How fast and how accurate is the team secret scanner?

``.venv/bin/python benchmarks/secrets_bench.py``.

Texts: 1 MB of "clean" text (this project's own source and docs, repeated -- minus the
scanner, whose source names every keyword) and the same text with one generated credential
for every rule spread through it. For each rule: running its regex over the whole text
("naive") vs. the scanner's way ("prefiltered": find the rule's keywords in the lower-cased
text, try the regex only at/around those positions). Best of N runs, milliseconds.

Accuracy: gitleaks' own literal rule-test samples (false positives and true positives of the 36
rules) and generated tokens of every format in config-file contexts, scanned without the
placeholder checks (regex matches only, the scanner before #8 item 10) and with them.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # for tests.team.samples (generated, never committed, tokens)

from tests.team.samples import SPECS, gitleaks_samples  # noqa: E402

from memdir.team.secrets import RULES, _rule_matches, _spans, scan  # noqa: E402

SIZE = 1_000_000
RUNS = 5


def best_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def clean_text() -> str:
    files = [*sorted((REPO / "src").rglob("*.py")), *sorted((REPO / "docs").rglob("*.md"))]
    parts = [p.read_text(encoding="utf-8") for p in files if p.name != "secrets.py"]
    base = "\n".join(parts) or "plain words and more plain words\n"
    return (base * (SIZE // len(base) + 1))[:SIZE]


def dirty_text(clean: str) -> str:
    rng = random.Random(0)
    tokens = [SPECS[rule.id].token(rng) for rule in RULES]
    step = len(clean) // (len(tokens) + 1)
    pieces = []
    for i, token in enumerate(tokens):
        pieces.append(clean[i * step : (i + 1) * step])
        pieces.append(f"\nkey = '{token}'\n")
    pieces.append(clean[len(tokens) * step :])
    return "".join(pieces)[: SIZE + 20_000]


def prefiltered(data: bytes, lowered: bytes, rule_index: int) -> object:
    return list(_rule_matches(RULES[rule_index], data, lowered))


# Where tokens show up in notes and configs (a token followed by a boundary everywhere).
CONTEXTS = (
    "{t}",
    "KEY={t}",
    "key = '{t}'",
    'export TOKEN="{t}"',
    "token: {t}",
    '{{"token": "{t}"}}',
    "`{t}`",
    "- use {t} for the staging account",
    "env:\n  SECRET: {t}\n",
    'System.setProperty("TOKEN", "{t}")',
)
GENERATED_PER_RULE = 50


def _rules_raw(text: str) -> set[str]:
    return {rule.id for _, _, rule in _spans(text.encode())}


def _rules_checked(text: str) -> set[str]:
    return {f.rule_id for f in scan(text)}


def accuracy_rows() -> list[tuple[str, int, str, str]]:
    """(sample set, n, without checks, with checks) -- counts of reported samples."""
    tps, fps = gitleaks_samples()
    rng = random.Random(0)
    generated = [
        (rule.id, CONTEXTS[i % len(CONTEXTS)].format(t=SPECS[rule.id].token(rng)))
        for rule in RULES
        for i in range(GENERATED_PER_RULE)
    ]
    fp_items = [(rule, text) for rule, texts in fps.items() for text in texts]
    tp_items = [(rule, text) for rule, texts in tps.items() for text in texts]
    rows = []
    for name, items, own in (
        ("gitleaks false positives, reported by their own rule", fp_items, True),
        ("gitleaks false positives, reported by any rule", fp_items, False),
        ("gitleaks true positives (literal samples), found", tp_items, True),
        (f"generated tokens, {GENERATED_PER_RULE} per rule in contexts, found", generated, True),
    ):
        counts = [
            sum((rule in find(text)) if own else bool(find(text)) for rule, text in items)
            for find in (_rules_raw, _rules_checked)
        ]
        rows.append((name, len(items), *(f"{c} ({100 * c / len(items):.1f}%)" for c in counts)))
    return rows


def main() -> None:
    print(f"{'sample set':56} {'n':>5} {'regex only':>13} {'with checks':>13}")
    for name, n, before, after in accuracy_rows():
        print(f"{name:56} {n:5} {before:>13} {after:>13}")
    print()
    clean = clean_text()
    dirty = dirty_text(clean)
    assert scan(clean) == [], "the clean text is not clean"
    assert {f.rule_id for f in scan(dirty)} == {r.id for r in RULES}

    rows = []
    for i, rule in enumerate(RULES):
        row = [rule.id]
        for text in (clean, dirty):
            data = text.encode()
            lowered = data.lower()
            row.append(best_ms(lambda d=data, r=rule: r.regex.findall(d)))
            row.append(best_ms(lambda d=data, lw=lowered, n=i: prefiltered(d, lw, n)))
        rows.append(row)

    print(
        f"{'rule':32} {'clean naive':>12} {'clean pre':>10} {'dirty naive':>12} {'dirty pre':>10}"
    )
    for rid, cn, cp, dn, dp in rows:
        print(f"{rid:32} {cn:12.2f} {cp:10.3f} {dn:12.2f} {dp:10.2f}")
    sums = [sum(r[k] for r in rows) for k in range(1, 5)]
    label = "sum of per-rule (ms)"
    print(f"{label:32} {sums[0]:12.2f} {sums[1]:10.3f} {sums[2]:12.2f} {sums[3]:10.2f}")
    print()
    encoded = clean.encode()
    print(f"encode + lower of 1 MB:    {best_ms(lambda: encoded.lower() + clean.encode()):7.2f} ms")
    print(f"scan(1 MB clean):          {best_ms(lambda: scan(clean)):7.2f} ms")
    print(f"scan(1 MB, 36 secrets):    {best_ms(lambda: scan(dirty)):7.2f} ms")
    dirty_bytes = dirty.encode()
    print(f"  same, regex spans only:  {best_ms(lambda: _spans(dirty_bytes)):7.2f} ms (no checks)")
    naive_all = best_ms(lambda: [r.regex.findall(encoded) for r in RULES])
    print(f"all 36 regexes, no filter: {naive_all:7.2f} ms (clean)")


if __name__ == "__main__":
    main()
