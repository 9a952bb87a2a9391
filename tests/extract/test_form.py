"""The memory form: rule, Why with evidence, How to apply of its own; evidence added once."""

from __future__ import annotations

import datetime as dt

from memdir.extract.form import (
    MAX_EVIDENCE,
    SEEN_AGAIN,
    body_of,
    evidence_of,
    how_to_apply,
    with_evidence,
    without_evidence,
)
from memdir.extract.rules import candidates
from memdir.model import MemoryType

TODAY = dt.date(2026, 12, 1)


def test_a_users_rule_gets_a_how_to_apply_of_its_own() -> None:
    said = (
        "Always run the linter before pushing. Use pnpm instead of npm. Never force-push to "
        "main. Make sure the changelog is updated for every release. Remember that the staging "
        "database listens on port 6543."
    )
    found = candidates(said, today=TODAY)
    hows = [how_to_apply(c) for c in found]
    assert len(found) == 5 and all(hows) and len(set(hows)) == 5
    assert hows[0] == "Before pushing: run the linter, without waiting to be asked."
    assert hows[1] == "Whenever npm would be the choice here, use pnpm."


def test_user_and_reference_memories_have_no_how_to_apply() -> None:
    (user,) = candidates("I'm a data scientist on the search team.", today=TODAY)
    assert user.type is MemoryType.USER and how_to_apply(user) is None
    assert "**How to apply:**" not in body_of(user, TODAY)


def test_evidence_is_added_once_and_capped() -> None:
    (rule,) = candidates("Never push to main.", today=TODAY)
    body = body_of(rule, TODAY)
    assert with_evidence(body, evidence_of(rule, TODAY), ours=True) is None  # already there
    for day in range(2, 2 + MAX_EVIDENCE + 1):
        line = evidence_of(rule, dt.date(2026, 12, day))
        grown = with_evidence(body, line, ours=True)
        assert grown is not None
        body = grown
    bullets = [ln for ln in body.splitlines() if ln.startswith("- 2026-")]
    assert len(bullets) == MAX_EVIDENCE and bullets[-1].startswith("- 2026-12-07")
    assert body.index("**Why:**") < body.index(bullets[0]) < body.index("**How to apply:**")


def test_a_persons_memory_keeps_every_word() -> None:
    mine = "Use --set-upstream on a new branch.\n\nI always forget this one.\n"
    grown = with_evidence(mine, "- 2026-12-01: `git push` failed", ours=False)
    assert grown is not None and grown.startswith(mine.rstrip("\n"))
    assert grown.endswith(f"{SEEN_AGAIN}\n- 2026-12-01: `git push` failed\n")
    again = with_evidence(grown, "- 2026-12-02: `git push` failed", ours=False)
    assert again is not None and again.count(SEEN_AGAIN) == 1


def test_comparing_ignores_evidence_and_dates() -> None:
    (rule,) = candidates("Never push to main.", today=TODAY)
    assert without_evidence(body_of(rule, TODAY)) == without_evidence(
        body_of(rule, dt.date(2027, 1, 5))
    )
