from __future__ import annotations

import pytest

from memdir.sameness import Comparer, closest, find_same, make_doc

FILLER = [
    make_doc(f"f{i}.md", "", "project", f"Unrelated topic {w} about {w}s and widgets")
    for i, w in enumerate(["kafka", "grafana", "oncall", "budget", "hiring", "latency"])
]


def verdict(a: str, b: str, *, ta: str = "project", tb: str = "project", sa: str = "") -> str:
    x, y = make_doc("a.md", sa, ta, a), make_doc("b.md", "", tb, b)
    return Comparer([x, y, *FILLER]).compare(x, y).verdict


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("Deploys go through CI.", "deploys  go through ci", "exact"),
        (
            "The billing service deploys every Tuesday via the release train",
            "Billing service deploys on Tuesdays via the release train, owned by Ana",
            "near",
        ),
        (
            "Staging database runs Postgres 14 on db-stage",
            "Staging database runs Postgres 16 on db-stage",
            "contradiction",
        ),
        (
            "The mobile app supports offline mode",
            "The mobile app no longer supports offline mode",
            "contradiction",
        ),
        (
            "The mobile app supports offline mode",
            "Kafka consumers lag during backfills",
            "different",
        ),
    ],
)
def test_verdicts(a: str, b: str, expected: str) -> None:
    assert verdict(a, b) == expected


def test_different_types_and_scopes_never_match() -> None:
    text = "Deploys go through CI."
    assert verdict(text, text, ta="user", tb="feedback") == "different"
    assert verdict(text, text, sa="team/") == "different"


def test_boilerplate_does_not_make_duplicates() -> None:
    tail = "\n**Why:** the user said so explicitly.\n**How to apply:** follow this in future work."
    docs = [
        make_doc(f"m{i}.md", "", "feedback", topic + tail)
        for i, topic in enumerate(
            [
                "Use pnpm for installs",
                "Never force-push to main",
                "Write commit messages in English",
                "Run the linter before pushing",
                "Prefer small pull requests",
            ]
        )
    ]
    comparer = Comparer(docs)
    verdicts = {comparer.compare(a, b).verdict for a, b in comparer.candidate_pairs()}
    assert verdicts <= {"different"}


def test_semantic_vectors_catch_paraphrases() -> None:
    import numpy as np

    a = make_doc("a.md", "", "feedback", "User prefers pnpm over npm for installs")
    b = make_doc("b.md", "", "feedback", "Use pnpm instead of npm when adding packages")
    vec = np.array([1.0, 0.0], dtype=np.float32)
    assert Comparer([a, b, *FILLER]).compare(a, b).verdict == "different"
    vectors = {"a.md": vec, "b.md": vec}
    assert Comparer([a, b, *FILLER], vectors).compare(a, b).verdict == "near"


def test_find_same_prefers_an_exact_copy_and_skips_contradictions() -> None:
    new = make_doc("", "", "project", "Staging database listens on port 6543", name="Staging db")
    docs = [
        *FILLER,
        make_doc(
            "old.md", "", "project", "Staging database listens on port 6544", name="Staging db"
        ),
        make_doc(
            "copy.md", "", "project", "Staging database listens on port 6543", name="Staging db"
        ),
    ]
    same = find_same(new, docs)
    assert same is not None and (same.b, same.verdict) == ("copy.md", "exact")
    conflict = closest(new, docs[:-1])
    assert conflict is not None and conflict.verdict == "contradiction"
    assert find_same(new, docs[:-1]) is None  # a contradiction is not the same memory
    assert find_same(new, FILLER) is None
