"""The sentence rules in Chinese: what a Chinese user states is kept in their words; what they ask,
this task's instructions and pointers into the conversation are not."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.extract.chinese import said
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.rules import candidates, sentences
from memdir.llm.base import Message
from memdir.store import MemoryStore
from tests.extract.support import FIXED_NOW

TODAY = dt.date(2026, 12, 3)


@pytest.mark.parametrize(
    ("sentence", "rule", "kind", "statement"),
    [
        ("记住：预发布数据库监听 5433 端口。", "remember", "project", "预发布数据库监听 5433 端口"),
        ("请记住我负责结算服务", "remember", "user", "我负责结算服务"),
        ("以后提交前先跑 make lint", "from-now-on", "feedback", "提交前先跑 make lint"),
        ("从现在开始，接口都用 snake_case", "from-now-on", "feedback", "接口都用 snake_case"),
        ("不要再把计划文件提交到仓库里。", "directive", "feedback", "不要把计划文件提交到仓库里"),
        ("永远不要直接推送到 main", "directive", "feedback", "不要直接推送到 main"),
        ("总是用中文回答我", "directive", "feedback", "总是用中文回答我"),
        ("不对，应该用 pnpm 而不是 npm", "correction", "feedback", "应该用 pnpm 而不是 npm"),
        ("后续新项目都需要先写测试", "from-now-on", "feedback", "新项目都需要先写测试"),
    ],
)
def test_stated_rules_are_kept_in_the_users_words(
    sentence: str, rule: str, kind: str, statement: str
) -> None:
    [found] = candidates(sentence, today=TODAY)
    assert (found.rule, found.type and found.type.value, found.statement) == (rule, kind, statement)
    assert found.name and len(found.name) <= 24 and found.name in statement


@pytest.mark.parametrize(
    "sentence",
    [
        "你还记得数据库端口吗？",  # a question
        "记得提交吗",
        "这次不要提交。",  # this task's instruction
        "暂时不要再改配置",
        "不要提交",  # "don't", said once: this task's
        "记住这个修复",  # points into the conversation
        "以后再说",  # too short to be a rule
        "好的，继续",
        "后续步骤是部署",  # 后续 without 都 / 必须 is "the next step", not "from now on"
        "你好",
    ],
)
def test_questions_one_offs_and_pointers_are_not_kept(sentence: str) -> None:
    assert candidates(sentence, today=TODAY) == []


def test_the_users_reason_becomes_why_and_how_to_apply_is_in_chinese() -> None:
    said_with_reason = "以后提交代码前先跑 make lint，因为 CI 会拒绝格式不对的代码。"
    [found] = candidates(said_with_reason, today=TODAY)
    assert found.statement == "提交代码前先跑 make lint"
    assert found.why == "CI 会拒绝格式不对的代码"
    assert found.how == "以后都这样做：提交代码前先跑 make lint。"
    [other] = candidates("不要再用 float 存金额，否则会有精度问题", today=TODAY)
    assert other.why == "否则会有精度问题"
    # from a handover brief in a held-out session: the user's own 禁止, the reason after a dash
    [banned] = candidates("禁止 deep-scrape-api.mjs — 会逐个跳转 URL，触发安全风控", today=TODAY)
    assert (banned.statement, banned.name) == ("禁止 deep-scrape-api.mjs",) * 2
    assert banned.why == "会逐个跳转 URL，触发安全风控"


def test_chinese_sentences_split_at_their_own_full_stops() -> None:
    text = "今天的任务完成了。以后提交前先跑测试！你觉得呢？"
    assert sentences(text) == ["今天的任务完成了。", "以后提交前先跑测试！", "你觉得呢？"]
    assert [c.statement for c in candidates(text, today=TODAY)] == ["提交前先跑测试"]


def test_english_with_a_chinese_name_still_goes_through_the_english_rules() -> None:
    [found] = candidates("Remember that 张伟 owns the billing service.", today=TODAY)
    assert found.rule == "remember" and found.statement == "张伟 owns the billing service"


@given(st.text(max_size=300))
def test_any_text_gives_a_rule_or_nothing(text: str) -> None:
    found = said(text)
    assert found is None or (found.statement and found.name)


async def test_one_memory_per_rule_in_the_users_words(store: MemoryStore) -> None:
    extractor = RuleExtractor(store, clock=lambda: FIXED_NOW)
    talk = [Message("user", "以后提交前先跑 make lint，因为 CI 会拒绝格式不对的代码。")]
    first = await extractor.extract(talk, new_messages=1)
    [path] = first.written
    memory = store.read(path.name)
    assert memory.type == "feedback" and memory.description == "提交前先跑 make lint"
    assert "**Why:** CI 会拒绝格式不对的代码" in memory.body
    assert "**How to apply:** 以后都这样做：提交前先跑 make lint。" in memory.body
    assert memory.body.startswith("提交前先跑 make lint。\n")
    # said again in other words, without the reason: the same memory, newer words, the reason kept
    again = extractor.apply_texts(["以后提交前都先跑 make lint！"])
    assert again.written == [path] and len(store.list()) == 1
    memory = store.read(path.name)
    assert memory.description == "提交前都先跑 make lint"
    assert "**Why:** CI 会拒绝格式不对的代码。 Seen in:" in memory.body
    assert memory.body.count("- 2026-11-29: the user said:") == 2
    [plain] = extractor.apply_texts(["永远不要直接推送到 main 分支"]).written
    assert "**Why:** 用户明确这样说过。 Seen in:" in store.read(plain.name).body


async def test_english_rewording_keeps_the_reason_given_before(store: MemoryStore) -> None:
    extractor = RuleExtractor(store, clock=lambda: FIXED_NOW)
    [path] = extractor.apply_texts(
        ["From now on, use pnpm for package installs in the web app because npm breaks the lock."]
    ).written
    assert extractor.apply_texts(
        ["From now on, use pnpm for all package installs in the web app."]
    ).written == [path]
    memory = store.read(path.name)
    assert memory.description == "Use pnpm for all package installs in the web app"
    assert "**Why:** npm breaks the lock. Seen in:" in memory.body
