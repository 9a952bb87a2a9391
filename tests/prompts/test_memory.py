"""The memory-mechanics prompt: every section in every mode, options, index embedding, dispatch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memdir.config import Settings, load_settings
from memdir.errors import ConfigError
from memdir.paths import ResolvedPaths, resolve_paths
from memdir.prompts import (
    EMPTY_INDEX_NOTE,
    PromptMode,
    build_agent_memory_prompt,
    build_memory_prompt,
    build_prompt_for_paths,
    render_index_context,
    select_mode,
)

MEM = Path("/srv/mem")
COMMON_TAIL = [
    "## When to access memories",
    "## Before recommending from memory",
    "## Memory and other forms of persistence",
]
HEADINGS = {
    "individual": [
        "# Auto memory",
        "## Types of memory",
        "## What NOT to save in memory",
        "## How to save memories",
        *COMMON_TAIL,
    ],
    "combined": [
        "# Memory",
        "## Memory scope",
        "## Types of memory",
        "## What NOT to save in memory",
        "## How to save memories",
        *COMMON_TAIL,
    ],
    "daily-log": [
        "# Auto memory (daily log)",
        "## What to log",
        "## What NOT to save in memory",
        "## The MEMORY.md index",
        *COMMON_TAIL,
    ],
}
ALL_MODES = list(HEADINGS)


def _headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^#{1,2} ", line)]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_every_section_present_in_order(mode: str) -> None:
    text = build_memory_prompt(MEM, mode=mode)
    assert _headings(text) == HEADINGS[mode]


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("skip_index", [False, True])
def test_no_placeholder_or_template_markup_leaks(mode: str, skip_index: bool) -> None:
    text = build_memory_prompt(
        MEM,
        mode=mode,
        index_text="- [a](a.md) — x",
        team_index_text="",
        extra_guidelines="Keep it short.",
        search_past_context=True,
        transcripts_dir=Path("/t"),
        skip_index=skip_index,
    )
    assert "$" not in text
    assert "<!--" not in text
    assert "\n\n\n" not in text
    assert text.endswith("\n") and not text.endswith("\n\n")


@pytest.mark.parametrize(("mode", "scopes"), [("individual", 0), ("combined", 4)])
def test_types_blocks(mode: str, scopes: int) -> None:
    text = build_memory_prompt(MEM, mode=mode)
    names = re.findall(r"<name>(\w+)</name>", text)
    assert names == ["user", "feedback", "project", "reference"]
    for tag in ("description", "when_to_save", "how_to_use", "examples"):
        assert text.count(f"<{tag}>") == 4 and text.count(f"</{tag}>") == 4
    bodies = re.findall(r"<body_structure>(.*?)</body_structure>", text, re.S)
    assert len(bodies) == 2  # feedback and project only
    assert all("**Why:**" in b and "**How to apply:**" in b for b in bodies)
    assert text.count("<scope>") == scopes


def test_combined_scope_guidance_per_type() -> None:
    text = build_memory_prompt(MEM, mode="combined", team_dir=Path("/srv/team"))
    blocks = dict(re.findall(r"<name>(\w+)</name>\s*<scope>(.*?)</scope>", text, re.S))
    assert "always private" in blocks["user"]
    assert "private by default" in blocks["feedback"]
    assert "team" in blocks["project"] and "leaning strongly towards team" in blocks["project"]
    assert blocks["reference"].startswith("usually team")
    assert "`/srv/team`" in text and "`/srv/mem`" in text
    assert "synchronized at the start of every session" in text
    assert "Never save API keys" in text
    assert "Each directory has its own `MEMORY.md`" in text


def test_team_dir_defaults_under_memory_dir() -> None:
    assert f"`{MEM / 'team'}`" in build_memory_prompt(MEM, mode="combined")


@pytest.mark.parametrize("mode", ["individual", "combined"])
def test_how_to_save_index_step_and_skip_index(mode: str) -> None:
    full = build_memory_prompt(MEM, mode=mode)
    assert "**Step 1**" in full and "**Step 2**" in full
    assert "`- [Title](file.md) — one-line hook`" in full
    assert "lines after 200 are cut off" in full
    for field in ("name:", "description:", "type:"):
        assert field in full
    skipped = build_memory_prompt(MEM, mode=mode, skip_index=True)
    assert "**Step 1**" in skipped and "**Step 2**" not in skipped
    assert "one-line hook" not in skipped
    assert "kept up to date for you" in skipped
    assert ("scope guidance" in skipped) is (mode == "combined")


@pytest.mark.parametrize("mode", ["individual", "combined"])
@pytest.mark.parametrize("skip_index", [False, True])
def test_how_to_save_asks_for_applies_when(mode: str, skip_index: bool) -> None:
    """The agent writing a memory file lists the requests it governs (docs/recall.md)."""
    text = build_memory_prompt(MEM, mode=mode, skip_index=skip_index)
    section = text[text.index("## How to save memories") :]
    section = section[: section.index("\n## ", 1)]
    start = section.index("```markdown")
    template = section[start : section.index("```", start + 3)]
    assert "\napplies_when:\n  - <" in template
    assert template.index("type:") < template.index("applies_when:") < template.rindex("---")
    assert "`applies_when` lists 3 to 8 short situations" in section
    assert "never use the memory's own words" in section


def test_what_not_to_save_and_access_rules() -> None:
    text = build_memory_prompt(MEM)
    for phrase in (
        "git log",
        "CLAUDE.md",
        "even when the user explicitly asks",
        "surprising or not obvious",
        "as if `MEMORY.md` were empty",
        "check that the file exists",
        "search the code for it",
        "Use a plan instead of memory",
        "Use tasks",
        "save it right away",
        "remove it",
        "already exists",
    ):
        assert phrase in text, phrase


def test_daily_log_mode() -> None:
    text = build_memory_prompt(MEM, mode="daily-log")
    assert f"`{MEM}/logs/YYYY/MM/YYYY-MM-DD.md`" in text
    assert "append-only" in text
    assert "consolidation pass" in text
    assert "read-only" in text
    assert "<type>" not in text and "**Step 1**" not in text


@pytest.mark.parametrize("mode", ALL_MODES)
def test_extra_guidelines(mode: str) -> None:
    with_extra = build_memory_prompt(MEM, mode=mode, extra_guidelines="  Never store names.  ")
    assert "## Additional guidelines\n\nNever store names.\n" in with_extra
    for empty in (None, "", "   "):
        assert "## Additional guidelines" not in build_memory_prompt(
            MEM, mode=mode, extra_guidelines=empty
        )


@pytest.mark.parametrize("mode", ALL_MODES)
def test_searching_past_context(mode: str) -> None:
    assert "## Searching past context" not in build_memory_prompt(MEM, mode=mode)
    text = build_memory_prompt(
        MEM, mode=mode, search_past_context=True, transcripts_dir=Path("/p/x")
    )
    assert f'grep -rn "<term>" {MEM} --include="*.md"' in text
    assert 'grep -rn "<term>" /p/x --include="*.jsonl"' in text
    memory_only = build_memory_prompt(MEM, mode=mode, search_past_context=True)
    assert "*.jsonl" not in memory_only and '--include="*.md"' in memory_only


@pytest.mark.parametrize("mode", ALL_MODES)
def test_index_embedding(mode: str) -> None:
    assert "## MEMORY.md" not in build_memory_prompt(MEM, mode=mode)
    empty = build_memory_prompt(MEM, mode=mode, index_text="  \n")
    assert EMPTY_INDEX_NOTE in empty
    text = build_memory_prompt(MEM, mode=mode, index_text="- [Role](user_role.md) — SRE\n")
    assert text.rstrip().endswith("- [Role](user_role.md) — SRE")


@pytest.mark.parametrize("mode", ALL_MODES)
def test_line_truncation_warning_is_embedded(mode: str) -> None:
    index = "\n".join(f"- [m{n}](m{n}.md) — hook {n}" for n in range(300))
    text = build_memory_prompt(MEM, mode=mode, index_text=index)
    assert "m199.md" in text and "m200.md" not in text
    assert "300 lines (limit: 200)" in text
    assert "WARNING" in text


def test_char_truncation_warning_is_embedded() -> None:
    index = "\n".join(f"- [m{n}](m{n}.md) — " + "x" * 400 for n in range(100))
    text = build_memory_prompt(MEM, index_text=index)
    assert "index entries are too long" in text
    embedded = text.split("## MEMORY.md\n\n", 1)[1]
    assert len(embedded.split("\n\n> WARNING")[0]) <= 25_000


def test_team_index_only_in_combined_and_wrapped() -> None:
    combined = build_memory_prompt(
        MEM, mode="combined", index_text="- [p](p.md) — private", team_index_text="- [t](t.md) — t"
    )
    assert "## MEMORY.md (private)\n\n- [p](p.md) — private" in combined
    assert (
        '## MEMORY.md (team)\n\n<team-memory-content source="shared">\n- [t](t.md) — t\n'
        "</team-memory-content>"
    ) in combined
    individual = build_memory_prompt(MEM, index_text="x", team_index_text="- [t](t.md) — t")
    assert "team-memory-content" not in individual


def test_deterministic() -> None:
    first = build_memory_prompt(MEM, mode="combined", index_text="a", team_index_text="b")
    again = build_memory_prompt(MEM, mode="combined", index_text="a", team_index_text="b")
    assert first == again


def test_unknown_mode() -> None:
    with pytest.raises(ValueError):
        build_memory_prompt(MEM, mode="shared")


@pytest.mark.parametrize(
    ("enabled", "daily", "team", "expected"),
    [
        (False, True, True, None),
        (True, True, True, PromptMode.DAILY_LOG),
        (True, True, False, PromptMode.DAILY_LOG),
        (True, False, True, PromptMode.COMBINED),
        (True, False, False, PromptMode.INDIVIDUAL),
    ],
)
def test_select_mode(enabled: bool, daily: bool, team: bool, expected: PromptMode | None) -> None:
    assert select_mode(enabled=enabled, daily_log=daily, team=team) is expected


def test_render_index_context() -> None:
    text = render_index_context(Path("/m/MEMORY.md"), "- [a](a.md) — x", description="memory")
    assert text == "Contents of /m/MEMORY.md (memory):\n\n- [a](a.md) — x"
    team = render_index_context(Path("/m/team/MEMORY.md"), "", description="team", team=True)
    assert team.endswith(
        f'<team-memory-content source="shared">\n{EMPTY_INDEX_NOTE}\n</team-memory-content>'
    )


@pytest.mark.parametrize(
    ("scope", "phrase"),
    [("user", "user-wide"), ("project", "version control"), ("local", "not checked in")],
)
def test_agent_memory_prompt(scope: str, phrase: str) -> None:
    text = build_agent_memory_prompt(MEM, scope=scope, index_text="")
    assert text.startswith("# Auto memory\n\n")
    assert phrase in text.split("\n\n")[1]
    assert EMPTY_INDEX_NOTE in text


def test_agent_memory_prompt_bad_scope() -> None:
    with pytest.raises(ConfigError):
        build_agent_memory_prompt(MEM, scope="team", index_text="")


def _resolved(tmp_path: Path, **env: str) -> tuple[ResolvedPaths, Settings]:
    settings = load_settings(
        {"HOME": str(tmp_path / "home"), **env},
        cwd=tmp_path,
        flag_settings=None,
        claude_mode=False,
        memory_dir_flag=None,
        policy_dir=tmp_path / "no-policy",
    )
    return resolve_paths(settings, cwd=tmp_path), settings


@pytest.mark.parametrize(
    ("env", "heading"),
    [
        ({}, "# Auto memory"),
        ({"MEMDIR_TEAM": "1"}, "# Memory"),
        ({"MEMDIR_TEAM": "1", "MEMDIR_DAILY_LOG": "1"}, "# Auto memory (daily log)"),
    ],
)
def test_prompt_for_paths_dispatches_on_settings(
    tmp_path: Path, env: dict[str, str], heading: str
) -> None:
    paths, settings = _resolved(tmp_path, MEMDIR_EXTRA_GUIDELINES="House rule.", **env)
    text = build_prompt_for_paths(paths, settings)
    assert text.splitlines()[0] == heading
    assert "House rule." in text
    assert str(paths.transcripts_dir) in text


def test_prompt_for_paths_reads_both_indexes(tmp_path: Path) -> None:
    paths, settings = _resolved(tmp_path, MEMDIR_TEAM="1")
    memory_dir = paths.memory_dir
    (memory_dir / "team").mkdir(parents=True)
    (memory_dir / "MEMORY.md").write_text("- [mine](mine.md) — private one\n")
    (memory_dir / "team" / "MEMORY.md").write_text("- [ours](ours.md) — shared one\n")
    text = build_prompt_for_paths(paths, settings)
    assert "- [mine](mine.md) — private one" in text
    assert '<team-memory-content source="shared">\n- [ours](ours.md) — shared one' in text
    plain = build_prompt_for_paths(paths, settings, mode="individual", include_index=False)
    assert "mine.md" not in plain and "## MEMORY.md" not in plain


def test_prompt_for_paths_disabled_is_empty_unless_mode_forced(tmp_path: Path) -> None:
    paths, settings = _resolved(tmp_path, MEMDIR_DISABLE="1")
    assert build_prompt_for_paths(paths, settings) == ""
    forced = build_prompt_for_paths(paths, settings, mode="individual", skip_index=True)
    assert forced.startswith("# Auto memory") and "**Step 2**" not in forced
