from __future__ import annotations

import datetime as dt
from pathlib import Path

from memdir import frontmatter, index_sections
from memdir.consolidate.offline import OfflineDreamer
from memdir.consolidate.plan import plan_offline
from memdir.consolidate.snapshot import Snapshots
from memdir.store import MemoryStore
from tests.consolidate.conftest import put, tree

TODAY = dt.date(2026, 11, 30)


def messy(root: Path) -> None:
    put(
        root,
        "pnpm.md",
        "Package manager",
        "user prefers pnpm over npm",
        "Use pnpm, not npm, for installs.\n**Why:** the lockfile is pnpm's.\n",
        type_="feedback",
        day="2026-10-01",
    )
    put(
        root,
        "pnpm_again.md",
        "Package manager preference",
        "user prefers pnpm over npm for installs",
        "Use pnpm, not npm, for installs.\nAlso in CI scripts.\n",
        type_="feedback",
        day="2026-11-02",
    )
    put(
        root,
        "copy.md",
        "Deploy day",
        "deploys on Tuesdays",
        "Deploys go out on Tuesdays.\n",
        day="2026-09-01",
    )
    put(
        root,
        "copy_2.md",
        "Deploy day",
        "deploys on Tuesdays",
        "Deploys go out on Tuesdays.\n",
        day="2026-09-03",
    )
    put(
        root,
        "db.md",
        "Staging database",
        "staging runs Postgres 14",
        "The staging database runs Postgres 14 on db-stage.\n",
        day="2026-08-01",
    )
    put(
        root,
        "db_now.md",
        "Staging database now",
        "staging runs Postgres 16",
        "Correction: the staging database now runs Postgres 16 on db-stage.\n",
        day="2026-10-20",
    )
    put(
        root,
        "cache.md",
        "Cache TTL",
        "cache TTL is 300 seconds",
        "The API cache TTL is 300 seconds.\n",
        day="2026-08-01",
    )
    put(
        root,
        "cache_b.md",
        "Cache TTL setting",
        "cache TTL is 600 seconds",
        "The API cache TTL is 600 seconds.\n",
        day="2026-09-01",
    )
    put(
        root,
        "billing_db.md",
        "Billing database",
        "billing stores data in Postgres 14",
        "billing stores its data in Postgres 14.\n",
    )
    put(
        root,
        "auth_db.md",
        "Auth database",
        "auth stores data in Postgres 16",
        "auth stores its data in Postgres 16.\n",
    )
    put(
        root,
        "launch.md",
        "Launch",
        "launch timing",
        "We decided yesterday to launch next Friday.\n```\nsleep until tomorrow\n```\n",
        day="2026-11-25",
    )
    put(
        root, "team/shared.md", "Deploy day", "deploys on Tuesdays", "Deploys go out on Tuesdays.\n"
    )
    (root / "MEMORY.md").write_text(
        "# Index\n\nSome notes a person wrote.\n"
        "- [Package manager](pnpm.md) — user prefers pnpm\n"
        "- [Package manager](pnpm.md) — listed twice\n"
        "- [Gone](gone.md) — deleted long ago\n"
        "- [Docs](https://example.com/docs) — external link kept\n"
    )


def test_plan_writes_nothing(store: MemoryStore) -> None:
    messy(store.root)
    before = tree(store.root)
    plan = plan_offline(store, today=TODAY)
    assert not plan.empty
    assert tree(store.root) == before


def test_duplicates_merge_into_the_newest_keeping_every_line(store: MemoryStore) -> None:
    messy(store.root)
    plan = plan_offline(store, today=TODAY)
    groups = {g.keep: (set(g.merged), g.kinds) for g in plan.duplicates}
    assert groups["pnpm_again.md"] == ({"pnpm.md"}, ("near",))
    assert groups["copy_2.md"] == ({"copy.md"}, ("exact",))
    merged = frontmatter.parse(plan.changes["pnpm_again.md"].after)
    assert "**Why:** the lockfile is pnpm's." in merged.body
    assert "Also in CI scripts." in merged.body
    assert merged.body.count("Use pnpm, not npm, for installs.") == 1
    assert merged.meta["updated"] == TODAY.isoformat()
    retired = frontmatter.parse(plan.changes["pnpm.md"].after)
    assert retired.meta["superseded_by"] == "pnpm_again.md"
    assert "duplicate of pnpm_again.md" in retired.meta["retired_reason"]
    assert retired.body == frontmatter.parse((store.root / "pnpm.md").read_text()).body
    # team memories are their own scope: never merged with private ones
    assert all("team/shared.md" not in (g.keep, *g.merged) for g in plan.duplicates)


def test_contradictions_resolved_only_on_explicit_correction(store: MemoryStore) -> None:
    messy(store.root)
    plan = plan_offline(store, today=TODAY)
    found = {(c.older, c.newer): c.resolved for c in plan.contradictions}
    assert found[("db.md", "db_now.md")] is True
    assert found[("cache.md", "cache_b.md")] is False
    assert "db.md" in plan.retired and "cache.md" not in plan.retired
    assert ("billing_db.md", "auth_db.md") not in found  # parallel facts, different subjects
    assert ("auth_db.md", "billing_db.md") not in found
    assert [f"{c.older} vs {c.newer}" for c in plan.flagged] == ["cache.md vs cache_b.md"]


def test_relative_dates_from_the_files_own_date(store: MemoryStore) -> None:
    messy(store.root)
    plan = plan_offline(store, today=TODAY)
    after = plan.changes["launch.md"].after
    assert "decided yesterday (2026-11-24) to launch next Friday (2026-11-27)." in after
    assert "sleep until tomorrow\n" in after  # code stays as written


def test_index_repair(store: MemoryStore) -> None:
    messy(store.root)
    plan = plan_offline(store, today=TODAY)
    text = plan.changes["MEMORY.md"].after
    assert text.startswith("# Index\n\nSome notes a person wrote.\n")
    assert "(gone.md)" not in text and "https://example.com/docs" in text
    assert "(pnpm.md)" not in text and "(copy.md)" not in text and "(db.md)" not in text
    assert "(pnpm_again.md)" in text and "(cache.md)" in text and "(launch.md)" in text
    assert all(len(line) <= 150 for line in text.splitlines())
    assert "team/shared.md" not in text
    repair = plan.index["MEMORY.md"]
    assert repair.dead == ["gone.md"] and repair.duplicates == ["pnpm.md"]


def test_huge_index_fits_its_limits(store: MemoryStore, snaps: Snapshots) -> None:
    for i in range(260):
        put(
            store.root,
            f"m{i:03}.md",
            f"Topic {i} {'x' * (i % 7)}",
            f"fact number {i} about q{i}",
            f"Body of memory {i}: unique token zz{i}.\n",
            day=f"2026-{1 + i % 12:02}-01",
        )
    lines = [f"- [T{i}](m{i:03}.md) — {'long hook ' * 30}" for i in range(260)]
    (store.root / "MEMORY.md").write_text("# Index\n\n" + "\n".join(lines) + "\n")
    plan = plan_offline(store, today=TODAY)
    assert plan.index["MEMORY.md"].left_out == 0  # no memory is cut from the index any more
    OfflineDreamer(store, snaps, today=TODAY).run()
    text = (store.root / "MEMORY.md").read_text()
    assert len(text.splitlines()) <= 200 and len(text) <= 25_000
    assert text.startswith("# Index\n")
    listed = index_sections.entries(store.root)
    assert sorted(listed) == [f"m{i:03}.md" for i in range(260)]  # each once, all of them
    assert all(r.ok for r in store.check_index())
    again = plan_offline(store, today=TODAY)
    assert "MEMORY.md" not in again.changes  # stable: sections are not planned again


def test_second_plan_after_applying_is_empty(store: MemoryStore) -> None:
    messy(store.root)
    plan = plan_offline(store, today=TODAY)
    for change in plan.changes.values():
        (store.root / change.rel).write_text(change.after)
    again = plan_offline(store, today=TODAY)
    assert again.changes == {}, again.summary()["changes"]


def test_stale_repo_paths_are_marked(store: MemoryStore, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "app").mkdir(parents=True)
    (project / "src" / "app" / "main.py").write_text("")
    put(
        store.root,
        "arch.md",
        "Architecture",
        "where things live",
        "Entry point: src/app/main.py; old router in src/app/router.py; see docs/x.md.\n",
    )
    plan = plan_offline(store, today=TODAY, project_root=project)
    assert plan.stale_refs == {"arch.md": ["src/app/router.py"]}  # docs/ is not in this repo
    assert frontmatter.parse(plan.changes["arch.md"].after).meta["stale_refs"] == [
        "src/app/router.py"
    ]


def test_corrupt_and_odd_files_are_skipped_not_touched(store: MemoryStore) -> None:
    messy(store.root)
    (store.root / "broken.md").write_text("---\nname: [unclosed\n---\nbody yesterday\n")
    (store.root / "binary.md").write_bytes(b"\x00\x01\x02")
    put(store.root, "café_東京.md", "Café 東京", "description: a: b", "Met Ana yesterday.\n")
    plan = plan_offline(store, today=TODAY)
    assert "broken.md" not in plan.changes and "binary.md" not in plan.changes
    assert "café_東京.md" in plan.changes
    assert any("broken.md" in s for s in plan.skipped) or "broken.md" not in plan.changes


def test_retired_memories_are_not_reconsolidated(store: MemoryStore) -> None:
    put(
        store.root,
        "a.md",
        "Deploy day",
        "deploys on Tuesdays",
        "Deploys go out on Tuesdays.\n",
        retired="2026-10-01",
        retired_reason="wrong",
    )
    put(store.root, "b.md", "Deploy day", "deploys on Tuesdays", "Deploys go out on Tuesdays.\n")
    plan = plan_offline(store, today=TODAY)
    assert plan.duplicates == []
    assert "(a.md)" not in plan.changes["MEMORY.md"].after
