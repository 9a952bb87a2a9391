"""Dream and evidence (issue #37): offline, a memory whose file git saw renamed is re-anchored;
one that relies on something gone is marked for a person or the model dream, never rewritten."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memdir import frontmatter
from memdir.consolidate.plan import plan_offline
from memdir.evidence import screen
from memdir.store import MemoryStore
from tests.consolidate.conftest import put
from tests.evidence.conftest import DB_V1, DB_V2, Repo

TODAY = dt.date(2026, 11, 30)


def test_a_renamed_file_is_re_anchored_and_a_gone_driver_is_marked(
    store: MemoryStore, tmp_path: Path
) -> None:
    repo = Repo(tmp_path / "project")
    repo.commit("db", {"src/db.py": DB_V1, "src/util.py": "def slugify(x):\n    return x\n"})
    put(
        store.root, "where.md", "Where", "where the helpers live", "Helpers are in `src/util.py`.\n"
    )
    put(store.root, "driver.md", "Driver", "the db driver", "`src/db.py` uses `psycopg2`.\n")
    for name in ("where.md", "driver.md"):
        repo.written_now(store.root / name)
    moved = {"src/util.py": None, "src/helpers/util.py": "def slugify(x):\n    return x\n"}
    head = repo.commit("move util; asyncpg", {**moved, "src/db.py": DB_V2})

    plan = plan_offline(store, today=TODAY, project_root=repo.root)
    where = frontmatter.parse(plan.changes["where.md"].after)
    assert "`src/helpers/util.py`" in where.body and "src/util.py`" not in where.body
    assert where.meta["verified"] == head and "where.md" in plan.extra["reanchored"]
    driver = frontmatter.parse(plan.changes["driver.md"].after)
    assert driver.body == "`src/db.py` uses `psycopg2`.\n"  # a question of meaning: not rewritten
    assert driver.meta["stale_refs"] == ["psycopg2"]

    for change in plan.changes.values():  # applied: the re-anchored memory is current again
        (store.root / change.rel).write_text(change.after)
    [checked] = screen([store.root / "where.md"], repo.root, None, budget=10)
    assert {v.state for v in checked.evidence.verdicts} == {"current"}
