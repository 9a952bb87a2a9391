"""claude-mem databases as its own migrations leave them (tests/importers/claude_mem_schema.py):
each layout read, newer or foreign schemas refused with one line, huge rows skipped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memdir.errors import ImportSourceError
from memdir.importers.claude_mem import KNOWN_VERSION, ClaudeMemSource
from tests.importers.claude_mem_schema import add_observation, add_summary, create_db


def read(path: Path) -> list:  # type: ignore[type-arg]
    return list(ClaudeMemSource().read(path))


@pytest.mark.parametrize("version", [4, 8, 17, KNOWN_VERSION])
def test_every_layout_claude_mem_migrations_produce_is_read(tmp_path: Path, version: int) -> None:
    db = tmp_path / "claude-mem.db"
    conn = create_db(db, version=version)
    add_observation(
        conn,
        type="decision",
        title="Billing uses Postgres 16",
        subtitle="Database choice for billing",
        narrative="Billing uses Postgres 16 because the audit pipeline needs logical replication.",
        facts=["Logical replication feeds the audit pipeline"],
    )
    add_observation(conn, type="bugfix", title="Fixed the modal", narrative="Fixed the modal.")
    conn.commit()
    decision, bugfix = read(db)
    assert decision.skip is None and "Postgres 16" in decision.body
    assert decision.source_id == "observation:1" and decision.type.value == "project"
    if version >= 8:
        assert decision.name == "Billing uses Postgres 16"
        assert decision.description == "Database choice for billing"
        assert "- Logical replication feeds the audit pipeline" in decision.body
    assert bugfix.skip is not None and bugfix.skip.startswith("git history")


def test_session_summaries_keep_what_was_learned_only(tmp_path: Path) -> None:
    conn = create_db(tmp_path / "c.db")
    add_summary(conn, "s-1", learned="The CI runners have no IPv6; use 127.0.0.1 in tests.")
    add_summary(conn, "s-2", learned=None, request="fix login", next_steps="deploy")
    conn.commit()
    learned, plan_only = read(tmp_path / "c.db")
    assert learned.skip is None and "IPv6" in learned.body
    assert plan_only.skip is not None and plan_only.skip.startswith("ephemeral task state")


def test_a_newer_schema_is_refused_in_one_line(tmp_path: Path) -> None:
    conn = create_db(tmp_path / "c.db")
    conn.execute(
        "INSERT INTO schema_versions (version, applied_at) VALUES (?, 'x')", (KNOWN_VERSION + 1,)
    )
    conn.commit()
    with pytest.raises(ImportSourceError, match=f"version {KNOWN_VERSION + 1} is newer") as exc:
        read(tmp_path / "c.db")
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", "not a claude-mem database"),
        (
            "CREATE TABLE schema_versions (version INTEGER, applied_at TEXT);"
            "INSERT INTO schema_versions VALUES (10, 'x');"
            "CREATE TABLE observations (id INTEGER PRIMARY KEY, type TEXT, body TEXT)",
            "unknown layout",
        ),
    ],
)
def test_a_database_of_another_schema_is_refused(tmp_path: Path, setup: str, message: str) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.executescript(setup)
    with pytest.raises(ImportSourceError, match=message):
        read(db)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(ImportSourceError, match="not an SQLite database"):
        read(tmp_path / "x.db")


def test_a_row_of_megabytes_is_skipped_without_loading_it_whole(tmp_path: Path) -> None:
    conn = create_db(tmp_path / "c.db")
    add_observation(conn, type="decision", title="Huge", narrative="x " * 2_000_000)
    add_observation(conn, type="decision", title="Small", narrative="Deploys need the VPN on.")
    conn.commit()
    huge, small = read(tmp_path / "c.db")
    assert len(huge.body) < 70_000  # cut in SQL: the 4 MB value never reached Python whole
    from memdir.importers.base import text_problem

    assert text_problem(huge.body) is not None
    assert small.skip is None


def test_a_json_export_from_claude_mems_script_is_read_like_the_database() -> None:
    from tests.importers.conftest import FIXTURES

    items = read(FIXTURES / "claude-mem" / "export.json")
    by_id = {i.source_id: i for i in items}
    windows = by_id["observation:101"]
    assert windows.skip is None and windows.name.startswith("Windows paths need forward slashes")
    assert "- Forward slashes work in both cmd and PowerShell" in windows.body
    assert by_id["observation:102"].skip.startswith("git history")  # type: ignore[union-attr]
    # the summary restates observation 101 in other words: one memory, both provenances
    assert (
        by_id["summary:55"].skip == "a session summary that restates observation:101 (merged there)"
    )
    assert windows.extra["merged_from"] == ["summary:55"]


def test_a_json_file_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"memories": []}')
    with pytest.raises(ImportSourceError, match="not a claude-mem export"):
        read(path)


def test_what_claude_mem_marks_sensitive_is_skipped_without_its_text(tmp_path: Path) -> None:
    """Issue #39.4: a client's revenue and a CFO's address came in as a project memory."""
    conn = create_db(tmp_path / "c.db")
    add_observation(
        conn, type="sensitive", title="Acme revenue", narrative="Acme's Q3 revenue was $4.1M."
    )
    add_observation(
        conn, type="security_note", title="CFO address", narrative="The CFO lives at 12 Elm St."
    )
    add_observation(conn, type="security_alert", title="Leaked key", narrative="A key leaked.")
    add_observation(conn, type="question", title="Open question", narrative="Why is CI slow?")
    add_observation(conn, type="discovery", title="CI cache", narrative="CI caches node_modules.")
    conn.commit()
    *skipped, kept = read(tmp_path / "c.db")
    assert kept.skip is None and "node_modules" in kept.body
    assert [s.skip.split(":")[0] for s in skipped] == ["sensitive"] * 3 + [
        "not a decision or discovery"
    ]
    for item in skipped[:3]:  # the report names the record, never its text
        assert "Acme" not in item.name + item.skip and "Elm" not in item.name + item.skip


def test_a_summary_that_restates_a_decision_is_merged_into_it(tmp_path: Path) -> None:
    """Issue #39.11: a session summary restating the session's decision in other words is not a
    second memory of it; what the summary adds is kept, and a value or a "not" of its own is
    something it adds."""
    conn = create_db(tmp_path / "c.db")
    add_observation(conn, type="decision", title="Payments use Postgres 16",
                    narrative="The payments service uses Postgres 16 because the audit "
                    "pipeline needs logical replication.")  # fmt: skip
    add_observation(conn, type="discovery", title="CI runners have no IPv6",
                    narrative="The CI runners have no IPv6; tests bind 127.0.0.1.")  # fmt: skip
    add_summary(conn, "s-1", learned="Decided that the payments service uses Postgres 16, since "
                "the audit pipeline needs logical replication. Also found that the CI runners "
                "have no IPv6, so tests bind 127.0.0.1.")  # fmt: skip
    add_summary(conn, "s-2", learned="The payments service uses Postgres 16 because the audit "
                "pipeline needs logical replication. The staging deploy needs the VPN profile "
                "corp-eu. Payments moved to Postgres 17 for logical replication.")  # fmt: skip
    add_summary(conn, "s-3", learned="The CI runners do not have IPv6 issues anymore.")
    conn.commit()
    decision, ci, whole, partly, negated = read(tmp_path / "c.db")
    assert whole.skip == (
        "a session summary that restates observation:1, observation:2 (merged there)"
    )
    assert decision.extra["merged_from"] == ["summary:1", "summary:2"]
    assert ci.extra["merged_from"] == ["summary:1"]
    assert partly.skip is None
    assert partly.fact == (
        "The staging deploy needs the VPN profile corp-eu. "
        "Payments moved to Postgres 17 for logical replication."
    )
    assert "Postgres 16" not in partly.body and partly.name.startswith("The staging deploy")
    assert negated.skip is None and "IPv6" in negated.body
