"""The not-to-keep rules on sentences other tools really write (MCP memory work logs, claude-mem
titles, Gemini bullets): precision first, so every "kept" row here is a rule worth keeping."""

from __future__ import annotations

import pytest

from memdir.importers.keep import not_to_keep


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Successfully completed Issue #941: Error Detail Modal System migration.", "git history"),
        ("Refactored TemplateSearchModal to be pure content component.", "git history"),
        ("FIXED: Added limit/offset to read_graph for pagination", "git history"),
        (
            "All tests passing (242 passed, 3 skipped) after legacy modal context removal.",
            "ephemeral task state",
        ),
        (
            "Modal migration plan Phase 3 can now proceed with ItemEditModal.",
            "ephemeral task state",
        ),
        ("For now, skip the flaky e2e suite.", "ephemeral task state"),
        ("Files: mod.rs, entity.rs, relation.rs, graph.rs, observation.rs", "code structure"),
        (
            "Barrel index.ts files are now banned in this codebase; such files must be removed.",
            None,
        ),
        ("Always start and restart the server in the background", None),
        ('When I say "let\'s merge", squish-merge the current PR into main.', None),
        ("The user is running Arch Linux with Btrfs and Snapper for system snapshots.", None),
        ("Lý do: Performance cao, memory safety, single binary deployment", None),
    ],
)
def test_not_to_keep(text: str, verdict: str | None) -> None:
    found = not_to_keep(text)
    assert (found.split(":")[0] if found else None) == verdict
