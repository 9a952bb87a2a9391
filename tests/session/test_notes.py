"""The notes template, parsing any shape, structure checks, exclusive creation, budgets."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.session.notes import (
    SECTION_NAMES,
    TRUNCATED_MARK,
    builtin_template,
    cap_instruction,
    create_exclusive,
    load_template,
    parse_notes,
    render_notes,
    section_budget,
    structure_problems,
    substitute,
)


def test_builtin_template_has_ten_sections_with_descriptions() -> None:
    notes = parse_notes(builtin_template())
    assert [s.name for s in notes.sections] == list(SECTION_NAMES) and len(SECTION_NAMES) == 10
    assert notes.intact and all(s.description.startswith("_") for s in notes.sections)
    assert structure_problems(builtin_template(), builtin_template()) == []


def test_structure_problems_catch_each_break() -> None:
    t = builtin_template()
    filled = render_notes({"Worklog": "- did a thing"}, t)
    assert structure_problems(filled, t) == []
    assert structure_problems(filled.replace("# Learnings\n", ""), t)
    assert structure_problems(filled + "\n# My New Section\n_x_\n", t) == [
        "new section 'My New Section'"
    ]
    broken = filled.replace("_Exact outputs", "_Changed")
    assert structure_problems(broken, t) == ["the description line of 'Key results' was changed"]


@given(st.text())
def test_parse_never_fails_on_hand_edited_notes(text: str) -> None:
    notes = parse_notes(text)
    assert notes.total_tokens >= 0
    assert isinstance(structure_problems(text, builtin_template()), list)


def test_create_exclusive_never_clobbers(tmp_path: Path) -> None:
    path = tmp_path / "s" / "session-memory" / "summary.md"
    assert create_exclusive(path, "A") is True
    assert create_exclusive(path, "B") is False
    assert path.read_text() == "A"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_user_template_without_the_sections_falls_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "template.md").write_text("# Only one\n_desc_\n")
    with caplog.at_level(logging.WARNING):
        assert load_template(tmp_path) == builtin_template()
    assert "missing section 'Session Title'" in caplog.text
    custom = builtin_template().replace("_A short, specific", "_Mine: a short")
    (tmp_path / "template.md").write_text(custom)
    assert load_template(tmp_path) == custom
    assert load_template(None) == builtin_template()


def test_substitution_is_one_pass() -> None:
    out = substitute(
        "{{currentNotes}} at {{notesPath}} {{other}}",
        {"currentNotes": "{{notesPath}}", "notesPath": "/p"},
    )
    assert out == "{{notesPath}} at /p {{other}}"


def test_cap_instruction_names_oversized_sections() -> None:
    notes = parse_notes(render_notes({"Worklog": "x" * 9000, "Learnings": "y"}, builtin_template()))
    text = cap_instruction(notes, per_section=2000, total=12000)
    assert "Worklog" in text and "Learnings" not in text
    assert cap_instruction(parse_notes(builtin_template()), per_section=2000, total=12000) == ""


def test_section_budget_cuts_longest_first_at_line_boundaries() -> None:
    notes = parse_notes(
        render_notes(
            {"Worklog": "\n".join(f"line {i}" for i in range(500)), "Learnings": "short"},
            builtin_template(),
        )
    )
    bodies = section_budget(notes.sections, budget_chars=800, per_section=8000)
    assert sum(len(b) for b in bodies) <= 800
    learn = bodies[SECTION_NAMES.index("Learnings")]
    work = bodies[SECTION_NAMES.index("Worklog")]
    assert learn == "short" and work.endswith(TRUNCATED_MARK)
    assert all(line.startswith("line ") for line in work.splitlines()[:-1])
