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


SCAFFOLD = '\n\n**Why:** 用户明确这样说过。 Seen in:\n- 2026-12-03: the user said: "{}"\n'


def chinese(rel: str, name: str, statement: str) -> object:
    body = statement + "。" + SCAFFOLD.format(statement)
    return make_doc(rel, "", "project", f"{statement}\n{body}", name=name)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # one character added: the same rule said again
        ("提交前先跑 make lint", "提交前都先跑 make lint", "near"),
        # two rules of one user, with the same English scaffolding around them (the eleventh set)
        ("案号是理清思路的依据", "网页上的文件，无论文件名字如何，一定是不一样的文件", "different"),
        # parallel facts about two things
        ("计费数据库用 Postgres 跑在 db-main", "认证数据库用 Postgres 跑在 db-main", "different"),
        ("预发布数据库监听 5433 端口", "预发布数据库监听 5434 端口", "contradiction"),
        ("回复总是用中文", "回复不要用中文", "contradiction"),
    ],
)
def test_chinese_memories_are_compared_by_what_they_say(a: str, b: str, expected: str) -> None:
    x, y = chinese("a.md", a, a), chinese("b.md", b, b)
    assert Comparer([x, y, *FILLER]).compare(x, y).verdict == expected  # type: ignore[arg-type]
