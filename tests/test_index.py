from __future__ import annotations

import pytest

from memdir import index


def test_small_index_is_untouched() -> None:
    t = index.load_for_prompt("  - [A](a.md) — x\n\n")
    assert t.content == "- [A](a.md) — x"
    assert not t.truncated and t.line_count == 1


def test_line_cap_fires_alone() -> None:
    text = "\n".join(f"- [M{i}](m{i}.md) — hook" for i in range(250))
    t = index.load_for_prompt(text)
    assert t.was_line_truncated and not t.was_byte_truncated
    body, warning = t.content.split("\n\n> WARNING: ")
    assert len(body.split("\n")) == 200
    assert warning.startswith("MEMORY.md is 250 lines (limit: 200).")


def test_char_cap_cuts_at_last_newline() -> None:
    text = "\n".join("- " + "x" * 998 for _ in range(30))  # 30 lines, ~30,000 chars
    t = index.load_for_prompt(text)
    assert t.was_byte_truncated and not t.was_line_truncated
    body = t.content.split("\n\n> WARNING: ")[0]
    assert len(body) <= 25_000 and body.endswith("x")
    assert len(body.split("\n")) == 24  # 25 lines of 1,001 chars would pass 25,000
    assert "29.3KB (limit: 24.4KB) — index entries are too long" in t.content


def test_both_caps_named() -> None:
    text = "\n".join("- " + "y" * 200 for _ in range(300))
    t = index.load_for_prompt(text)
    assert t.was_line_truncated and t.was_byte_truncated
    assert "300 lines and 59.5KB" in t.content


def test_hard_cut_when_no_newline() -> None:
    t = index.load_for_prompt("z" * 30_000)
    assert t.content.startswith("z" * 25_000 + "\n\n> WARNING")


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1KB"),
        (1536, "1.5KB"),
        (3 * 1024 * 1024, "3MB"),
    ],
)
def test_format_size(n: int, text: str) -> None:
    assert index.format_size(n) == text


def test_entry_line_is_short_and_parses_back() -> None:
    line = index.entry_line("Title [x]", "dir/my file.md", "word " * 100)
    assert len(line) <= 155
    assert index.entry_link(line) == "dir/my file.md"
    assert line.startswith("- [Title (x)](dir/my%20file.md) — ")


def test_upsert_replaces_and_keeps_hand_written_lines() -> None:
    text = "# My memories\n\nSome notes I wrote.\n- [Old](a.md) — old hook\n- [B](b.md) — b\n"
    out = index.upsert_entry(text, "a.md", "- [New](a.md) — new hook")
    assert (
        out == "# My memories\n\nSome notes I wrote.\n- [New](a.md) — new hook\n- [B](b.md) — b\n"
    )
    out = index.upsert_entry(out, "c.md", "- [C](c.md) — c")
    assert out.endswith("- [B](b.md) — b\n- [C](c.md) — c\n")
    assert index.remove_entry(out, "b.md").count("b.md") == 0


def test_upsert_collapses_duplicates() -> None:
    text = "- [A](a.md) — 1\n- [A again](a.md) — 2\n"
    assert index.upsert_entry(text, "a.md", "- [A](a.md) — 3") == "- [A](a.md) — 3\n"


@pytest.mark.parametrize(
    ("rel", "scope"),
    [
        ("a.md", ("MEMORY.md", "a.md")),
        ("sub/a.md", ("MEMORY.md", "sub/a.md")),
        ("team/a.md", ("team/MEMORY.md", "a.md")),
        ("MEMORY.md", None),
        ("team/MEMORY.md", None),
        ("logs/2026/11/2026-11-29.md", None),
        ("notes.txt", None),
    ],
)
def test_index_scope(rel: str, scope: tuple[str, str] | None) -> None:
    assert index.index_scope(rel) == scope


def test_check_text_finds_every_kind_of_drift() -> None:
    text = (
        "- [A](a.md) — a\n- [A](a.md) — again\n- [Gone](gone.md) — x\n- [Web](https://x.io) — y\n"
    )
    text += "- " + "w" * 250 + "\n"
    r = index.check_text("MEMORY.md", text, {"a.md", "b.md"}, {"a.md", "b.md"})
    assert r.duplicates == ["a.md"]
    assert r.dead_links == ["gone.md"]
    assert r.unindexed == ["b.md"]
    assert r.long_lines == [5]
    assert not r.ok


@pytest.mark.parametrize(
    ("link", "shown"),
    [
        ("数据库测试规范.md", "数据库测试规范.md"),
        ("équipe/déploiement.md", "équipe/déploiement.md"),
        ("a (draft).md", "a%20%28draft%29.md"),
        ("100%.md", "100%25.md"),
    ],
)
def test_links_keep_letters_of_every_script(link: str, shown: str) -> None:
    """Regression: Unicode slugs were written as %E6%95%B0… in MEMORY.md (27 chars for 3)."""
    line = index.entry_line("T", link, "hook")
    assert f"]({shown})" in line
    assert index.entry_link(line) == link


def test_an_old_percent_encoded_entry_is_replaced_not_duplicated() -> None:
    old = "- [T](%E6%95%B0%E6%8D%AE.md) — hook\n"
    updated = index.upsert_entry(old, "数据.md", index.entry_line("T", "数据.md", "new"))
    assert updated == "- [T](数据.md) — new\n"


def test_an_entry_line_carries_no_terminal_escape_nul_or_bidi_override() -> None:
    hook = "blue-green\x00 \x1b]0;x\x07on fly"
    line = index.entry_line("\x1b[2JDeploys\u202e", "deploys.md", hook)
    assert line == "- [(2JDeploys](deploys.md) — blue-green ]0;xon fly"
    assert line.isprintable() and index.entry_link(line) == "deploys.md"
