"""The multilingual embedder, the language guess and the per-dir embedder choice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memdir.errors import ConfigError
from memdir.recall.embed import MiniLMEmbedder
from memdir.recall.multilingual import (
    USEEmbedder,
    choose_embedder,
    is_english,
    mostly_non_english,
)
from memdir.store import MemoryStore

ZH = [
    (
        "数据库测试规范",
        "集成测试必须使用真实数据库，不要用模拟对象",
        "上次模拟测试通过了但生产迁移失败了。",
    ),
    ("部署流程", "CI 通过后用 make deploy-staging 部署到预发布环境", "部署后在频道里通知。"),
    ("退款规则", "超过 1000 欧元的退款需要财务部门的第二位审批人", "接口会检查。"),
]


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("Integration tests must use the real PostgreSQL container, never mocks", True),
        ("User prefers terse answers", True),
        ("集成测试必须使用真实数据库", False),
        ("Le déploiement se fait le vendredi après la validation de la CI", False),
        ("Die Datenbankmigration läuft jeden Montag in der Nacht", False),
        ("Los reembolsos de más de 1.000 EUR necesitan un segundo aprobador", False),
    ],
)
def test_language_guess(text: str, english: bool) -> None:
    assert is_english(text) is english


def make_dir(root: Path, memories: list[tuple[str, str, str]]) -> Path:
    store = MemoryStore(root)
    for name, description, body in memories:
        store.create(name, description, "project", body)
    return store.root


def test_a_chinese_dir_gets_the_multilingual_model_and_an_english_one_minilm(
    tmp_path: Path,
) -> None:
    chinese = make_dir(tmp_path / "zh", ZH)
    english = make_dir(
        tmp_path / "en", [("Merge freeze", "No merges until the mobile release", "Ask Dana.")]
    )
    assert mostly_non_english(chinese) and not mostly_non_english(english)
    assert isinstance(choose_embedder(chinese), USEEmbedder)
    assert isinstance(choose_embedder(english), MiniLMEmbedder)
    assert isinstance(choose_embedder(english, "multilingual"), USEEmbedder)
    assert isinstance(choose_embedder(chinese, "minilm"), MiniLMEmbedder)
    with pytest.raises(ConfigError, match="unknown recall embedder"):
        choose_embedder(chinese, "bert")


def test_use_embeds_across_languages() -> None:
    model = USEEmbedder()
    vectors = model.embed(
        [
            "Should I mock the database in the integration tests?",
            "集成测试必须使用真实数据库，不要用模拟对象",
            "超过 1000 欧元的退款需要第二位审批人",
        ]
    )
    assert vectors.shape == (3, model.dim) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert model.embed([]).shape == (0, model.dim)
