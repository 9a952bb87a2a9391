"""Build claude-mem databases the way claude-mem's own migrations do (``SessionStore``, claude-mem
13.15): the initial schema (version 4), then the migrations that touch the tables an import reads,
each recorded in ``schema_versions``. Written from reading those migrations; only the tables and
columns memdir reads are reproduced exactly (the sync and queue tables are not).

``create_db(path, version=4)`` is the original layout (``text`` only, ``sdk_session_id``);
``version=8`` adds the hierarchical fields; ``version=49`` is the current layout.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

INITIAL = """
CREATE TABLE schema_versions (id INTEGER PRIMARY KEY, version INTEGER UNIQUE NOT NULL,
  applied_at TEXT NOT NULL);
CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, claude_session_id TEXT NOT NULL,
  sdk_session_id TEXT UNIQUE, project TEXT NOT NULL, user_prompt TEXT, started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
  status TEXT CHECK(status IN ('active', 'completed', 'failed')) NOT NULL DEFAULT 'active');
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sdk_session_id TEXT NOT NULL,
  project TEXT NOT NULL, text TEXT NOT NULL, type TEXT NOT NULL, created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(sdk_session_id) REFERENCES sdk_sessions(sdk_session_id) ON DELETE CASCADE);
CREATE TABLE session_summaries (id INTEGER PRIMARY KEY AUTOINCREMENT,
  sdk_session_id TEXT UNIQUE NOT NULL, project TEXT NOT NULL, request TEXT, investigated TEXT,
  learned TEXT, completed TEXT, next_steps TEXT, files_read TEXT, files_edited TEXT, notes TEXT,
  created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
CREATE INDEX idx_observations_type ON observations(type);
"""

# (version, statements): only the migrations that change the observation and summary tables.
MIGRATIONS: list[tuple[int, str]] = [
    (
        6,
        "ALTER TABLE observations ADD COLUMN prompt_number INTEGER;"
        "ALTER TABLE session_summaries ADD COLUMN prompt_number INTEGER;",
    ),
    (
        8,
        "ALTER TABLE observations ADD COLUMN title TEXT;"
        "ALTER TABLE observations ADD COLUMN subtitle TEXT;"
        "ALTER TABLE observations ADD COLUMN facts TEXT;"
        "ALTER TABLE observations ADD COLUMN narrative TEXT;"
        "ALTER TABLE observations ADD COLUMN concepts TEXT;"
        "ALTER TABLE observations ADD COLUMN files_read TEXT;"
        "ALTER TABLE observations ADD COLUMN files_modified TEXT;",
    ),
    (
        11,
        "ALTER TABLE observations ADD COLUMN discovery_tokens INTEGER DEFAULT 0;"
        "ALTER TABLE session_summaries ADD COLUMN discovery_tokens INTEGER DEFAULT 0;",
    ),
    (
        17,
        "ALTER TABLE sdk_sessions RENAME COLUMN claude_session_id TO content_session_id;"
        "ALTER TABLE sdk_sessions RENAME COLUMN sdk_session_id TO memory_session_id;"
        "ALTER TABLE observations RENAME COLUMN sdk_session_id TO memory_session_id;"
        "ALTER TABLE session_summaries RENAME COLUMN sdk_session_id TO memory_session_id;",
    ),
    (22, "ALTER TABLE observations ADD COLUMN content_hash TEXT;"),
    (
        26,
        "ALTER TABLE observations ADD COLUMN generated_by_model TEXT;"
        "ALTER TABLE observations ADD COLUMN relevance_count INTEGER DEFAULT 0;",
    ),
    (
        27,
        "ALTER TABLE observations ADD COLUMN merged_into_project TEXT;"
        "ALTER TABLE session_summaries ADD COLUMN merged_into_project TEXT;",
    ),
    (
        28,
        "ALTER TABLE observations ADD COLUMN agent_type TEXT;"
        "ALTER TABLE observations ADD COLUMN agent_id TEXT;",
    ),
    (30, "ALTER TABLE observations ADD COLUMN metadata TEXT;"),
    (
        39,
        "ALTER TABLE observations ADD COLUMN synced_at INTEGER;"
        "ALTER TABLE session_summaries ADD COLUMN synced_at INTEGER;",
    ),
    (
        41,
        "ALTER TABLE observations ADD COLUMN origin_device_id TEXT;"
        "ALTER TABLE observations ADD COLUMN origin_local_id TEXT;"
        "ALTER TABLE observations ADD COLUMN sync_rev TEXT NOT NULL DEFAULT '1';",
    ),
]
ALL_VERSIONS = [
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    16,
    17,
    20,
    21,
    22,
    23,
    24,
    26,
    27,
    28,
    29,
    30,
    31,
    32,
    33,
    34,
    35,
    39,
    41,
    42,
    44,
    45,
    46,
    48,
    49,
]


def create_db(path: Path, *, version: int = 49) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.executescript(INITIAL)
    for v, script in MIGRATIONS:
        if v <= version:
            conn.executescript(script)
    now = dt.datetime(2026, 11, 1, tzinfo=dt.UTC).isoformat()
    conn.executemany(
        "INSERT INTO schema_versions (version, applied_at) VALUES (?, ?)",
        [(v, now) for v in ALL_VERSIONS if v <= version],
    )
    session_col = "memory_session_id" if version >= 17 else "sdk_session_id"
    content_col = "content_session_id" if version >= 17 else "claude_session_id"
    conn.execute(
        f"INSERT INTO sdk_sessions ({content_col}, {session_col}, project, started_at,"
        " started_at_epoch) VALUES (?, ?, ?, ?, ?)",
        ("c-1", "s-1", "demo", now, 1_780_000_000),
    )
    conn.commit()
    return conn


def add_observation(
    conn: sqlite3.Connection,
    *,
    type: str,
    title: str | None = None,
    subtitle: str | None = None,
    narrative: str | None = None,
    text: str | None = None,
    facts: list[str] | None = None,
    epoch: int = 1_780_000_000,
) -> int:
    cols = {row[1] for row in conn.execute("PRAGMA table_info(observations)")}
    session_col = "memory_session_id" if "memory_session_id" in cols else "sdk_session_id"
    values: dict[str, object] = {
        session_col: "s-1",
        "project": "demo",
        "type": type,
        "created_at": dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(),
        "created_at_epoch": epoch,
        "text": text if text is not None else ("" if "title" in cols else narrative or ""),
    }
    if "title" in cols:
        values.update(
            title=title,
            subtitle=subtitle,
            narrative=narrative,
            facts=json.dumps(facts or []),
            concepts=json.dumps([]),
        )
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    cur = conn.execute(
        f"INSERT INTO observations ({names}) VALUES ({marks})", list(values.values())
    )
    return int(cur.lastrowid or 0)


def add_summary(
    conn: sqlite3.Connection,
    session: str,
    *,
    learned: str | None,
    request: str = "",
    next_steps: str = "",
) -> int:
    cols = {row[1] for row in conn.execute("PRAGMA table_info(session_summaries)")}
    session_col = "memory_session_id" if "memory_session_id" in cols else "sdk_session_id"
    cur = conn.execute(
        f"INSERT INTO session_summaries ({session_col}, project, request, learned, next_steps,"
        " created_at, created_at_epoch) VALUES (?, 'demo', ?, ?, ?, '2026-11-02T10:00:00Z', 1)",
        (session, request, learned, next_steps),
    )
    return int(cur.lastrowid or 0)
