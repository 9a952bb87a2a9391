"""Session notes re-injected after a compaction: by priority within the budget, never a cut."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.session.notes import builtin_template, parse_notes, render_notes
from memdir.session.reinject import fit_notes
from tests.adapters.hooks.fakehost import FakeHost


def long_notes() -> str:
    """Notes shaped like a long real session: big file, workflow and worklog sections early and
    late, and the sections a colleague needs most at the end of the file."""
    bodies = {
        "Session Title": "Port the importer to the new queue",
        "Current State": "Latest request: finish the retry path\nPending: run the full suite",
        "Task specification": "\n".join(f"- request {i}: " + "x" * 120 for i in range(40)),
        "Files and Functions": "\n".join(f"- `src/mod_{i}.py` — edited 1" for i in range(120)),
        "Workflow": "\n".join(f"- `pytest tests/test_{i}.py -q`" for i in range(80)),
        "Errors & Corrections": "\n".join(
            f"- `pytest -q` failed: AssertionError {i} → fixed" for i in range(30)
        )
        + "\n- `make lint` failed: E501 line too long → fixed by reformatting (LAST ERROR)",
        "Learnings": "- the pre-commit hook runs the formatter and blocks the commit",
        "Key results": "\n".join(f"- {i} passed" for i in range(20)) + "\n- 412 passed (LAST)",
        "Worklog": "\n".join(f"- step {i} → Edit×2 [mod_{i}.py]" for i in range(200)),
    }
    return render_notes(bodies, builtin_template())


def test_every_section_keeps_its_most_recent_lines_within_the_budget() -> None:
    text = long_notes()
    assert len(text) > 8_000
    fitted = fit_notes(text, 6_000, notes_path=Path("/n/summary.md"))
    assert len(fitted) <= 6_000
    notes = parse_notes(fitted)
    for section in parse_notes(text).sections:
        if section.body.strip():
            assert notes.body(section.name).strip(), section.name  # no section dropped whole
    assert "(LAST ERROR)" in notes.body("Errors & Corrections")
    assert "412 passed (LAST)" in notes.body("Key results")
    assert "Pending: run the full suite" in notes.body("Current State")
    assert "step 199" in notes.body("Worklog") and "step 0 " not in notes.body("Worklog")
    assert "older lines left out" in fitted and "/n/summary.md" in fitted


def test_notes_that_fit_come_back_unchanged() -> None:
    text = render_notes({"Current State": "working"}, builtin_template())
    assert fit_notes(text, 10_000) == text


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=600, max_value=20_000))
def test_never_over_the_budget(budget: int) -> None:
    assert len(fit_notes(long_notes(), budget)) <= budget


def test_session_start_after_compaction_keeps_errors_and_results(tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    session = host.session()
    where = json.loads(host.memdir("--json", "where").stdout)["paths"]
    notes = Path(where["transcripts_dir"]) / session.session_id / "session-memory" / "summary.md"
    notes.parent.mkdir(parents=True)
    notes.write_text(long_notes())
    after = session.start(source="compact")
    assert after.code == 0
    context = after.context
    assert len(context) <= 8_000
    injected = context.split("## Session notes (kept across the compaction)", 1)[1]
    # before the fix: the notes were cut at 8,000 characters, losing these sections whole
    assert "(LAST ERROR)" in injected and "412 passed (LAST)" in injected
    assert "pre-commit hook runs the formatter" in injected
