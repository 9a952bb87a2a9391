"""Session notes kept within their budgets: what leaves first and what never does."""

from __future__ import annotations

from memdir.session.notes_budget import fit_sections, shrink


def test_a_file_path_is_never_dropped_only_its_functions() -> None:
    body = "\n".join(f"- `src/m{n}.py` — edited 2 — fn: alpha, beta, gamma" for n in range(40))
    out = shrink("Files and Functions", body, 200)
    assert [ln.split(" — ")[0] for ln in out.splitlines()] == [
        f"- `src/m{n}.py`" for n in range(40)
    ]
    assert "fn:" not in out


def test_dropped_lines_are_counted_in_one_marker_that_a_later_fit_adds_to() -> None:
    body = "\n".join(f"- turn {n}: ran the tests again" for n in range(50))
    once = shrink("Worklog", body, 400)
    assert len(once) <= 400 and once.splitlines()[-1] == "- turn 49: ran the tests again"
    first = int(once.splitlines()[0].split("(")[1].split()[0])
    more = "\n".join(f"- turn {n}: ran the tests again" for n in range(50, 55))
    twice = shrink("Worklog", f"{once}\n{more}", 400)
    second = int(twice.splitlines()[0].split("(")[1].split()[0])
    assert second == first + 5 and twice.count("condensed away") == 1


def test_the_least_important_section_gives_way_first() -> None:
    bodies = {
        "Worklog": "\n".join(f"- turn {n}" for n in range(200)),
        "Learnings": "- always run make fmt before committing",
        "Files and Functions": "- `src/app.py` — edited 1",
    }
    fit_sections(bodies, section_chars=10_000, total_chars=1_500)
    assert sum(len(b) for b in bodies.values()) <= 1_500
    assert bodies["Learnings"] == "- always run make fmt before committing"
    assert bodies["Files and Functions"] == "- `src/app.py` — edited 1"
    assert "condensed away" in bodies["Worklog"]
