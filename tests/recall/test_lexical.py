"""Lexical recall: the question-aware analyzer, BM25 scoring, and the saved index."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memdir.recall.lexical import AnalyzerConfig, LexicalIndex, TermAnalyzer


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("When did Caroline go to the support group?", ["carolin", "support", "group"]),
        ("What kind of pottery does Melanie make?", ["potteri", "melani", "make"]),
        ("Deploying the staging servers", ["deploy", "stage", "server"]),
        ("What's she's doing", []),
        ("snake_case identifiers", ["snakecas", "identifi"]),
    ],
)
def test_question_aware_terms(text: str, terms: list[str]) -> None:
    assert TermAnalyzer().terms(text) == terms


def test_without_stemming_words_stay_whole() -> None:
    analyzer = TermAnalyzer(AnalyzerConfig(stem_language=None))
    assert analyzer.terms("Deploying servers") == ["deploying", "servers"]


DOCS = [
    "Deploy to staging with make deploy-staging after the tests pass",
    "Melanie paints sunrises over the lake",
    "The staging database is reset every night",
    "",
]


def test_bm25_ranks_the_matching_document_first() -> None:
    index = LexicalIndex().build(DOCS)
    scores = index.scores("How do I deploy to staging?")
    assert scores.shape == (4,)
    assert int(np.argmax(scores)) == 0
    assert scores[2] > 0 == scores[1] == scores[3]


@pytest.mark.parametrize("query", ["", "what is it?", "zzzunknownword"])
def test_queries_without_known_terms_score_zero(query: str) -> None:
    assert not LexicalIndex().build(DOCS).scores(query).any()


def test_empty_index_scores_nothing() -> None:
    assert LexicalIndex().build([]).scores("deploy").shape == (0,)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    index = LexicalIndex().build(DOCS)
    index.save(tmp_path / "lexical.npz")
    loaded = LexicalIndex.load(tmp_path / "lexical.npz", TermAnalyzer())
    assert loaded is not None
    np.testing.assert_array_equal(loaded.scores("staging deploy"), index.scores("staging deploy"))


def test_a_loaded_index_scores_exactly_as_bm25s_without_importing_it(tmp_path: Path) -> None:
    """A cold process loads the saved index and scores it itself (bm25s's import was most of
    the load); the scores are bm25s's own, term for term, repeated terms included."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)]
    docs = [" ".join(rng.choice(words, size=int(rng.integers(1, 40)))) for _ in range(500)]
    analyzer = TermAnalyzer(AnalyzerConfig(stem_language=None))
    built = LexicalIndex(analyzer).build(docs)
    built.save(tmp_path / "lexical.npz")
    queries = [" ".join(rng.choice(words, size=int(rng.integers(1, 8)))) for _ in range(50)]
    queries += ["w1 w1 w2", "nothing known here"]
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from memdir.recall.lexical import AnalyzerConfig, LexicalIndex, TermAnalyzer\n"
        "a = TermAnalyzer(AnalyzerConfig(stem_language=None))\n"
        "index = LexicalIndex.load(Path(sys.argv[1]), a)\n"
        "out = [index.scores(q).tolist() for q in json.loads(sys.argv[2])]\n"
        "print(json.dumps({'bm25s': 'bm25s' in sys.modules, 'scores': out}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "lexical.npz"), json.dumps(queries)],
        capture_output=True,
        text=True,
        check=True,
    )
    answer = json.loads(done.stdout)
    assert answer["bm25s"] is False
    for query, scores in zip(queries, answer["scores"], strict=True):
        np.testing.assert_array_equal(np.array(scores, dtype=np.float32), built.scores(query))


@pytest.mark.parametrize(
    ("payload", "analyzer"),
    [
        (None, TermAnalyzer()),  # missing file
        (b"not a zip file", TermAnalyzer()),  # corrupt
        ("saved", TermAnalyzer(AnalyzerConfig(stem_language=None))),  # other settings
    ],
)
def test_load_refuses_missing_corrupt_or_mismatched(
    tmp_path: Path, payload: bytes | str | None, analyzer: TermAnalyzer
) -> None:
    path = tmp_path / "lexical.npz"
    if payload == "saved":
        LexicalIndex().build(DOCS).save(path)
    elif isinstance(payload, bytes):
        path.write_bytes(payload)
    assert LexicalIndex.load(path, analyzer) is None


def test_cjk_runs_become_character_bigrams() -> None:

    analyzer = TermAnalyzer()
    assert analyzer.terms("数据库测试") == ["数据", "据库", "库测", "测试"]
    assert analyzer.terms("用mock吗") == ["用", "mock", "吗"]
    assert analyzer.terms("テスト計画") == ["テス", "スト", "ト計", "計画"]
    assert analyzer.terms("Tests hit a real database") == ["test", "hit", "real", "databas"]


def test_a_chinese_query_finds_the_chinese_memory() -> None:

    docs = [
        "集成测试必须使用真实数据库，不要用模拟对象",
        "部署前必须通过预发布环境验证",
        "用户喜欢简短的回答",
    ]
    index = LexicalIndex().build(docs)
    scores = index.scores("集成测试可以用模拟数据库吗？")
    assert int(np.argmax(scores)) == 0 and scores[0] > 0
    assert index.scores("怎么部署到预发布环境")[1] == max(index.scores("怎么部署到预发布环境"))
