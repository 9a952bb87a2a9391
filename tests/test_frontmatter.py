from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir import frontmatter
from memdir.errors import FrontmatterError
from memdir.model import MemoryType


def test_parse_basic() -> None:
    p = frontmatter.parse("---\nname: a\ndescription: b\ntype: user\n---\nbody\n")
    assert p.meta == {"name": "a", "description": "b", "type": "user"}
    assert p.body == "body\n"
    assert p.has_frontmatter


def test_bom_and_crlf() -> None:
    p = frontmatter.parse("\ufeff---\r\nname: a\r\n---\r\nline 1\r\nline 2\r\n")
    assert p.meta == {"name": "a"}
    assert p.body == "line 1\r\nline 2\r\n"


def test_missing_fence_means_no_frontmatter() -> None:
    p = frontmatter.parse("just a note\n---\n")
    assert p.meta == {} and p.body == "just a note\n---\n" and not p.has_frontmatter


def test_unclosed_fence_names_file_and_line() -> None:
    with pytest.raises(FrontmatterError) as info:
        frontmatter.parse("---\nname: a\nbody", source="mem/x.md")
    assert info.value.line == 1
    assert "mem/x.md:1" in str(info.value)


def test_invalid_yaml_reports_line() -> None:
    with pytest.raises(FrontmatterError) as info:
        frontmatter.parse("---\nname: a\ndescription: [unclosed\n---\n", source="x.md")
    assert info.value.line is not None and info.value.line >= 3
    assert str(info.value).startswith("x.md:")


@pytest.mark.parametrize("block", ["- a\n- b\n", "just a string\n", "42\n"])
def test_non_mapping_yaml_is_an_error(block: str) -> None:
    with pytest.raises(FrontmatterError, match="mapping"):
        frontmatter.parse(f"---\n{block}---\nbody")


def test_empty_frontmatter_is_empty_mapping() -> None:
    assert frontmatter.parse("---\n---\nbody").meta == {}


def test_dates_come_back_as_iso_strings() -> None:
    p = frontmatter.parse("---\ncreated: 2026-11-29\n---\n")
    assert p.meta["created"] == "2026-11-29"


def test_unknown_type_is_kept_verbatim() -> None:
    m = frontmatter.parse_memory("---\nname: n\ntype: Gossip\n---\nb", "n.md")
    assert m.type == "Gossip" and m.memory_type is None
    assert "type: Gossip" in frontmatter.dump_memory(m)


def test_known_type_parses_case_insensitively() -> None:
    assert MemoryType.parse(" Feedback ") is MemoryType.FEEDBACK


def test_extra_keys_survive_round_trip() -> None:
    text = "---\nname: n\ndescription: d\ntype: project\ntags:\n- a\n---\nbody\n"
    m = frontmatter.parse_memory(text, "n.md")
    assert m.extra == {"tags": ["a"]}
    assert frontmatter.parse_memory(frontmatter.dump_memory(m), "n.md") == m


def test_huge_body_parses() -> None:
    body = "x" * 5_000_000 + "\n"
    assert frontmatter.parse("---\nname: a\n---\n" + body).body == body


def test_parse_lines_stops_at_given_lines() -> None:
    lines = ["---\n", "name: a\n", "---\n", "body\n"]
    assert frontmatter.parse_lines(lines) == {"name": "a"}
    with pytest.raises(FrontmatterError):
        frontmatter.parse_lines(lines[:2])


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
_scalar = st.one_of(_text, st.integers(), st.booleans())


@given(
    meta=st.dictionaries(
        st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1), _scalar, max_size=5
    ),
    body=_text,
)
def test_parse_dump_round_trip(meta: dict[str, object], body: str) -> None:
    parsed = frontmatter.parse(frontmatter.dump(meta, body))
    assert parsed.body == body
    assert parsed.meta == meta
