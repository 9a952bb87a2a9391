"""The multilingual embedder, the language guess and the per-dir embedder choice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memdir.errors import ConfigError
from memdir.recall.embed import MiniLMEmbedder
from memdir.recall.multilingual import USEEmbedder, choose_embedder
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


def test_the_embedder_is_chosen_per_dir_on_request(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "zh")
    for name, description, body in ZH:
        store.create(name, description, "project", body)
    assert isinstance(choose_embedder(store.root), MiniLMEmbedder)
    assert isinstance(choose_embedder(store.root, "minilm"), MiniLMEmbedder)
    assert isinstance(choose_embedder(store.root, "multilingual"), USEEmbedder)
    with pytest.raises(ConfigError, match="unknown recall embedder"):
        choose_embedder(store.root, "bert")


def test_use_gets_its_own_cache_and_rule(tmp_path: Path) -> None:
    from memdir.recall.local import LocalSelector
    from memdir.recall.relevance import DEFAULT_RULE

    store = MemoryStore(tmp_path / "zh")
    for name, description, body in ZH:
        store.create(name, description, "project", body)
    selector = LocalSelector(store.root, tmp_path / "cache", embedder=USEEmbedder())
    assert selector.relevance != DEFAULT_RULE
    picked = selector.select_sync("Should the integration tests mock the database?", None)
    assert [s.filename for s in picked][:1] == ["数据库测试规范.md"]
    assert (tmp_path / "cache" / "search" / "use-multilingual-v3" / "manifest.json").exists()


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
