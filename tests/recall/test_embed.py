"""Embedders: the vendored vocabulary gives the model's own token ids; vectors make sense."""

from __future__ import annotations

import numpy as np
import pytest

from memdir.recall.embed import VOCAB_PATH, Embedder, HashingEmbedder, MiniLMEmbedder, l2_normalise


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("", [101, 102]),
        ("the", [101, 1996, 102]),
        ("Hello, world!", [101, 7592, 1010, 2088, 999, 102]),
        ("The DEPLOY staging", [101, 1996, 21296, 15308, 102]),
        ("unaffable", [101, 14477, 20961, 3468, 102]),  # WordPiece continuation pieces
    ],
)
def test_token_ids_match_bert_base_uncased(
    minilm: MiniLMEmbedder, text: str, ids: list[int]
) -> None:
    assert minilm.tokenize(text) == ids


def test_vocab_is_the_full_uncased_vocabulary() -> None:
    lines = VOCAB_PATH.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 30522
    assert (lines[0], lines[100], lines[101], lines[102], lines[1996]) == (
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "the",
    )


def test_long_text_is_truncated_to_the_model_window(minilm: MiniLMEmbedder) -> None:
    assert len(minilm.tokenize("word " * 1000)) == 256


def test_paraphrases_are_closer_than_unrelated_text(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(
        [
            "How do I deploy the app to staging?",
            "Steps to push a release to the staging environment",
            "My favourite fruit is mango",
        ]
    )
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.5 > sims[0, 2]


def test_batching_and_padding_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a much longer sentence about deploying services to production safely"]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_empty_input_gives_an_empty_matrix(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.parametrize("embedder", [HashingEmbedder(), MiniLMEmbedder()])
def test_embedders_satisfy_the_protocol(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.embed(["x y"]).shape == (1, embedder.dim)


def test_hashing_embedder_is_deterministic_and_word_based() -> None:
    a, b = HashingEmbedder(dim=64), HashingEmbedder(dim=64)
    va = a.embed(["deploy staging server", "deploy staging", "mango fruit", ""])
    vb = b.embed(["deploy staging server", "deploy staging", "mango fruit", ""])
    np.testing.assert_array_equal(va, vb)
    assert va[0] @ va[1] > va[0] @ va[2]
    assert not va[3].any()
    assert a.embedded == 4


def test_l2_normalise_keeps_zero_rows_finite() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_the_model_session_does_not_spin_after_a_run(minilm: MiniLMEmbedder) -> None:
    # a spinning thread pool kept the daemon's cores busy after every recall: the hook's own
    # git calls and the host then waited for them
    minilm.embed(["load the session"])
    options = minilm._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_the_quick_graph_and_the_optimised_one_give_the_same_vectors() -> None:
    # a cold process answers its first query with the graph as shipped (issue #37: ready in
    # ~40 ms, not ~200); a long-lived one swaps in the optimised graph: same vectors either way
    texts = ["how should I write the db tests?", "Use pnpm, never npm", "用中文回复"]
    model = MiniLMEmbedder()
    quick = model.embed(texts[:1])
    assert not model._optimized
    options = model._session.get_session_options()
    assert str(options.graph_optimization_level).endswith("ORT_DISABLE_ALL")
    model.upgrade()
    assert model._optimized
    assert "ORT_ENABLE_ALL" in str(model._session.get_session_options().graph_optimization_level)
    np.testing.assert_allclose(model.embed(texts[:1]), quick, atol=1e-5)
    bulk = MiniLMEmbedder()
    batch = bulk.embed(texts * 20)  # past UPGRADE_AFTER texts: the optimised graph is built
    assert bulk._optimized
    np.testing.assert_allclose(batch[0], quick[0], atol=1e-5)
