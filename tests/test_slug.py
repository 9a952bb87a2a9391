"""Slugs keep every script, never fold into a generic or dangerous name, and never collide."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.pathsafe import check_relative
from memdir.slug import MAX_SLUG_BYTES, slugify
from memdir.store import MemoryStore


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("数据库测试规范", "数据库测试规范"),
        ("Déploiement", "déploiement"),
        ("Straße der Tests", "straße_der_tests"),
        ("テスト 計画", "テスト_計画"),
        ("Plan: Q2 goal!", "plan_q2_goal"),
        ("ＡＢＣ full width", "ａｂｃ_full_width"),
    ],
)
def test_keeps_letters_of_any_script(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_decomposed_input_gives_the_composed_slug() -> None:
    assert slugify(unicodedata.normalize("NFD", "Déploiement")) == "déploiement"


def test_names_with_nothing_to_keep_get_distinct_hashed_names() -> None:
    slugs = {slugify(n) for n in ("!!!", "???", "🚀🚀", "  ")}
    assert len(slugs) == 4
    assert all(s.startswith("memory_") and s != "memory_" for s in slugs)


def test_compatibility_forms_that_hide_dots_are_punctuation() -> None:
    assert slugify("⒈⒉ notes") == "notes"  # ⒈ is "1." under NFKC


def test_long_names_are_capped_in_bytes_and_stay_distinct() -> None:
    a, b = "数" * 200 + "甲", "数" * 200 + "乙"
    assert slugify(a) != slugify(b)
    assert all(len(slugify(n).encode()) <= MAX_SLUG_BYTES for n in (a, b))


@given(st.text(max_size=300))
def test_every_slug_is_a_safe_single_file_name(name: str) -> None:
    slug = slugify(name)
    assert slug and len(slug.encode()) <= MAX_SLUG_BYTES
    assert check_relative(slug + ".md") == slug + ".md"
    assert "/" not in slug and not slug.startswith(".")


def test_two_chinese_memories_get_two_files(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    first = store.create("数据库测试规范", "集成测试必须使用真实数据库", "feedback", "原因")
    second = store.create("部署流程", "部署前必须通过预发布环境验证", "project", "步骤")
    assert {first.path, second.path} == {"数据库测试规范.md", "部署流程.md"}


def test_the_ascii_fast_path_keeps_what_the_general_rule_keeps() -> None:
    import random
    import string

    from memdir import slug

    def general(name: str) -> str:  # the rule for any script, applied to ASCII
        pieces: list[str] = []
        for char in name.lower():
            if slug._kept(char):
                pieces.append(char)
            elif pieces and pieces[-1] != "_":
                pieces.append("_")
        return "".join(pieces).strip("_")

    rng = random.Random(7)
    for _ in range(20_000):
        name = "".join(rng.choice(string.printable) for _ in range(rng.randint(1, 40)))
        expected = general(name)
        if expected and len(expected) <= slug.MAX_SLUG_BYTES:
            assert slug.slugify(name) == expected, repr(name)
