from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import time
import tracemalloc
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir import frontmatter
from memdir.errors import FrontmatterError, InvalidTextError
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


def test_a_lone_surrogate_in_a_value_is_an_invalid_text_error() -> None:
    """Regression: a tool caller's ``"\\ud800"`` in a list value reached the YAML emitter and
    came out as a bare UnicodeEncodeError, not a memdir error (the CLI crashed on it)."""
    with pytest.raises(InvalidTextError, match="lone surrogate"):
        frontmatter.dump({"applies_when": ["ok", "bad \ud800"]}, "body\n")
    with pytest.raises(InvalidTextError, match="lone surrogate"):
        frontmatter.with_keys("---\nname: m\n---\nbody\n", {"applies_when": ["\udc80"]})


# -- lenient parsing (reference facts §3) -------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("description: Q2 goal: ship the billing API", "Q2 goal: ship the billing API"),
        ("description: *args and &refs", "*args and &refs"),
        ("description: [WIP] tidy the backlog", "[WIP] tidy the backlog"),
        ('description: @team said "hi": {ok}', '@team said "hi": {ok}'),
        ("description: path C:\\temp\\x: done", "path C:\\temp\\x: done"),
    ],
)
def test_lenient_quotes_values_models_write(line: str, value: str) -> None:
    text = f"---\nname: n\n{line}\ntype: project\n---\nbody\n"
    with pytest.raises(FrontmatterError):
        frontmatter.parse(text)
    parsed = frontmatter.parse(text, lenient=True)
    assert parsed.meta == {"name": "n", "description": value, "type": "project"}
    assert parsed.body == "body\n"
    assert parsed.repair is not None and parsed.repair.kind == "quoted"
    assert parsed.repair.lines == (3,)


def test_lenient_keeps_file_with_empty_header_when_quoting_fails() -> None:
    parsed = frontmatter.parse("---\nname: x\n- y\n---\nbody\n", lenient=True)
    assert parsed.meta == {} and parsed.body == "body\n"
    assert parsed.repair is not None and parsed.repair.kind == "dropped"


def test_lenient_unclosed_fence_keeps_whole_text_as_body() -> None:
    text = "---\nname: a\nbody without a closing fence\n"
    parsed = frontmatter.parse(text, lenient=True)
    assert parsed.body == text and parsed.meta == {}
    assert parsed.repair is not None and parsed.repair.kind == "dropped"


def test_valid_yaml_is_never_requoted() -> None:
    parsed = frontmatter.parse("---\ndescription: fix bug #12\n---\n", lenient=True)
    assert parsed.repair is None and parsed.meta == {"description": "fix bug"}


def test_repaired_text_changes_only_the_quoted_lines() -> None:
    text = '\ufeff---\r\nname: n\r\ndescription: a: b \\ "c"\r\ntags: [x]\r\n---\r\nbody: x\r\n'
    fixed = frontmatter.repaired_text(text)
    assert fixed == (
        '\ufeff---\r\nname: n\r\ndescription: "a: b \\\\ \\"c\\""\r\ntags: [x]\r\n---\r\n'
        "body: x\r\n"
    )
    assert frontmatter.parse(fixed).meta["description"] == 'a: b \\ "c"'
    assert frontmatter.repaired_text("---\nname: ok\n---\n") is None
    assert frontmatter.repaired_text("---\nname: x\n- y\n---\n") is None


def test_parse_memory_reads_quoted_but_refuses_dropped_header() -> None:
    m = frontmatter.parse_memory("---\nname: n\ndescription: a: b\n---\nx", "n.md")
    assert m.description == "a: b"
    with pytest.raises(FrontmatterError, match=r"n\.md"):
        frontmatter.parse_memory("---\nname: x\n- y\n---\n", "n.md")


# -- bad values and hostile YAML (issue #8 items 2 and 3) ---------------------------------------


def test_impossible_date_is_kept_as_text_not_a_crash() -> None:
    # Before: PyYAML's timestamp constructor raised ValueError (month must be in 1..12).
    assert frontmatter.parse("---\ncreated: 2020-13-45\n---\n").meta == {"created": "2020-13-45"}
    assert frontmatter.parse("---\nupdated: 2026-11-29 10:00:00\n---\n").meta == {
        "updated": "2026-11-29 10:00:00"
    }


def alias_bomb(levels: int = 10, width: int = 10) -> str:
    lines = ["a0: &a0 [" + ",".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


def test_alias_bomb_is_refused_under_a_memory_and_time_limit() -> None:
    # A real bound: a child process with 512 MB of address space and a 60 s timeout. Before the
    # fix, expanding 10^10 nodes exhausted memory (MemoryError) or ran past the timeout.
    script = textwrap.dedent(
        f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (512 * 2**20, 512 * 2**20))
        from memdir import frontmatter
        parsed = frontmatter.parse({alias_bomb()!r}, lenient=True)
        assert parsed.meta == {{}} and parsed.repair.kind == "dropped", parsed
        print(parsed.repair.reason)
        try:
            frontmatter.parse({alias_bomb()!r})
        except frontmatter.FrontmatterError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "alias bomb" in done.stdout and done.stdout.count("nodes") == 2


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        ("x: " + "[" * 200 + "]" * 200 + "\n", "deeper than"),
        ("x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 60)), "deeper than"),
        ("x: &a [1, *a]\n", "recursive"),
        ("x: " + "y" * (frontmatter.MAX_YAML_CHARS + 1) + "\n", "characters"),
    ],
)
def test_hostile_yaml_is_reported_as_corrupt(block: str, reason: str) -> None:
    with pytest.raises(FrontmatterError, match=reason):
        frontmatter.parse(f"---\n{block}---\n")
    parsed = frontmatter.parse(f"---\n{block}---\nbody", lenient=True)
    assert parsed.meta == {} and parsed.body == "body"
    assert parsed.repair is not None and reason in parsed.repair.reason


def test_small_alias_use_still_works() -> None:
    meta = frontmatter.parse("---\nbase: &b {k: v}\nuse: *b\n---\n").meta
    assert meta == {"base": {"k": "v"}, "use": {"k": "v"}}


def _yaml_chain(levels: int, width: int, fanout: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['v'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fanout)}]")
    return "\n".join(lines) + "\n"


_hostile_yaml = st.one_of(
    st.builds(
        _yaml_chain,
        st.integers(1, 14),
        st.integers(1, 30),
        st.integers(1, 12),
    ),
    st.builds(
        lambda depth, open_, close: "x: " + open_ * depth + close * depth + "\n",
        st.integers(1, 400),
        st.sampled_from(["[", "{a: "]),
        st.sampled_from(["]", "}"]),
    ),
    st.builds(
        lambda depth: "".join("  " * i + f"k{i}:\n" for i in range(depth)),
        st.integers(1, 120),
    ),
    st.lists(
        st.text(alphabet=st.sampled_from(list("ab:&*[]{}!|>%@`#'\" -\t\\")), max_size=40),
        max_size=25,
    ).map(lambda rows: "\n".join(f"k{i}: {r}" for i, r in enumerate(rows)) + "\n"),
)


def _bounded(fn: Callable[[], object]) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        fn()
    finally:
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # Safety bounds against hangs and blow-ups, far above normal cost (milliseconds, KBs).
    assert elapsed < 10.0
    assert peak < 64 * 2**20


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(block=_hostile_yaml)
def test_random_yaml_parses_within_bounds_and_lenient_never_raises(block: str) -> None:
    text = f"---\n{block}---\nbody\n"

    def run() -> None:
        parsed = frontmatter.parse(text, lenient=True)
        assert parsed.body == "body\n"
        assert isinstance(parsed.meta, dict)
        with contextlib.suppress(FrontmatterError):
            frontmatter.parse(text)
        frontmatter.parse_header_lines(text.splitlines(keepends=True))

    _bounded(run)


@settings(max_examples=150)
@given(data=st.binary(max_size=2000))
def test_random_bytes_never_crash_the_parser(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")

    def run() -> None:
        for candidate in (text, "---\n" + text, "---\n" + text + "\n---\n"):
            frontmatter.parse(candidate, lenient=True)
            with contextlib.suppress(FrontmatterError):
                frontmatter.parse(candidate)

    _bounded(run)


# -- with_keys: one field changed, every other byte kept ------------------------------------------
_SITUATIONS = st.lists(_text.filter(str.strip), max_size=3)


@given(
    meta=st.dictionaries(
        st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1), _scalar, max_size=5
    ),
    body=_text,
    value=_SITUATIONS,
    crlf=st.booleans(),
)
def test_with_keys_changes_only_that_key(
    meta: dict[str, object], body: str, value: list[str], crlf: bool
) -> None:
    text = frontmatter.dump(meta, body)
    if crlf:
        text = text.replace("\n", "\r\n")
    body = frontmatter.parse(text).body
    try:
        out = frontmatter.with_keys(text, {"applies_when": value})
    except FrontmatterError:
        return  # refused: the caller leaves the file alone (never a wrong write)
    parsed = frontmatter.parse(out)
    assert parsed.meta == {**frontmatter.parse(text).meta, "applies_when": value}
    assert parsed.body == body
    header = text[: len(text) - len(body)]
    kept = [
        line for line in header.splitlines(keepends=True) if not line.startswith("applies_when")
    ]
    assert all(line in out for line in kept)
    removed = frontmatter.with_keys(out, {"applies_when": None})
    assert frontmatter.parse(removed).meta == {
        k: v for k, v in frontmatter.parse(text).meta.items() if k != "applies_when"
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("body only\n", "---\napplies_when:\n- a\n---\nbody only\n"),
        (
            "\ufeff---\r\nname: x\r\n---\r\nb\r\n",
            "\ufeff---\r\nname: x\r\napplies_when:\r\n- a\r\n---\r\nb\r\n",
        ),
        (
            "---\nname: x  # mine\napplies_when:\n  - old\n\n  - older\ntype: user\n---\nb",
            "---\nname: x  # mine\ntype: user\napplies_when:\n- a\n---\nb",
        ),
    ],
)
def test_with_keys_keeps_the_header_as_written(text: str, expected: str) -> None:
    assert frontmatter.with_keys(text, {"applies_when": ["a"]}) == expected


@pytest.mark.parametrize(
    "text", ["---\nname: [unclosed\n---\nb\n", "---\n{name: x, applies_when: [a]}\n---\nb\n"]
)
def test_with_keys_refuses_a_header_it_cannot_edit_by_lines(text: str) -> None:
    with pytest.raises(FrontmatterError):
        frontmatter.with_keys(text, {"applies_when": ["a"]})
