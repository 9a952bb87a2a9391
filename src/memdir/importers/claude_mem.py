"""``memdir import claude-mem [DB]``: claude-mem's SQLite database
(``~/.claude-mem/claude-mem.db``), or a JSON file from its export script (``*.json``).

Read from the schema claude-mem's own migrations build (``SessionStore``): a ``schema_versions``
table (highest version :data:`KNOWN_VERSION` as of claude-mem 13.15), ``observations`` and
``session_summaries``. Versions handled: the original layout (observations with ``text`` only,
session column ``sdk_session_id``), the hierarchical fields of migration 8 (``title``,
``subtitle``, ``narrative``, ``facts``, ``concepts``) and the rename of migration 17
(``memory_session_id``). A database without those tables, or of a newer version, is refused with
one line: memdir will not guess at a layout it has not read.

Mapping: an observation of type ``decision`` or ``discovery`` is a project memory (its title
names it, its subtitle says when it matters, its narrative and facts are the body); ``bugfix``,
``feature``, ``refactor`` and ``change`` records are git history and are skipped (counted), so
are what claude-mem marks ``sensitive``, ``security_alert`` or ``security_note`` (without their
text in the report) and any other type. A
session summary's ``learned`` is a project memory; its ``request``, ``completed`` and
``next_steps`` are task state and are skipped. The database is opened read-only.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memdir.errors import ImportSourceError
from memdir.importers.base import (
    MAX_ITEM_CHARS,
    Item,
    first_sentence,
    iso_date,
    load_json,
    one_line,
    read_text,
    title_of,
)
from memdir.importers.facts import describe, fact_item
from memdir.importers.restated import Statements
from memdir.model import MemoryType

KNOWN_VERSION = 49
_CHANGE_TYPES = frozenset({"bugfix", "feature", "refactor", "change"})
_KEPT_TYPES = frozenset({"decision", "discovery"})
# what claude-mem itself marks as not to be repeated: a client's figures, a person's address
_SENSITIVE_TYPES = frozenset({"sensitive", "security_alert", "security_note"})
_CAP = MAX_ITEM_CHARS + 1  # longer columns are cut in SQL: a row of megabytes is never loaded
_TEXT_COLUMNS = ("title", "subtitle", "narrative", "text", "facts", "concepts")


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise ImportSourceError(f"no claude-mem database at {path}")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ImportSourceError(f"{path}: not an SQLite database ({exc})") from None
    conn.text_factory = lambda b: b.decode("utf-8", "replace")
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def check_schema(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version, after checking this is a claude-mem database memdir can read."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = {"schema_versions", "observations"} - tables
    if missing:
        raise ImportSourceError(
            f"{path} is not a claude-mem database (no {', '.join(sorted(missing))} table)"
        )
    try:
        version = conn.execute("SELECT MAX(version) FROM schema_versions").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise ImportSourceError(f"{path}: unreadable schema_versions table ({exc})") from None
    if not isinstance(version, int):
        raise ImportSourceError(f"{path}: claude-mem schema_versions holds no version")
    if version > KNOWN_VERSION:
        raise ImportSourceError(
            f"{path}: claude-mem schema version {version} is newer than memdir reads "
            f"(up to {KNOWN_VERSION}); upgrade memdir or export from claude-mem to JSON"
        )
    cols = _columns(conn, "observations")
    if not {"id", "type"} <= cols or not ({"text", "narrative", "title"} & cols):
        raise ImportSourceError(
            f"{path}: claude-mem observations table has an unknown layout "
            f"({', '.join(sorted(cols))})"
        )
    return version


Row = Mapping[str, Any]


def _select(conn: sqlite3.Connection, table: str, wanted: tuple[str, ...]) -> Iterator[Row]:
    cols = _columns(conn, table)
    parts = [f"substr({c}, 1, {_CAP}) AS {c}" if c in cols else f"NULL AS {c}" for c in wanted]
    conn.row_factory = sqlite3.Row
    try:
        for row in conn.execute(f"SELECT id, {', '.join(parts)} FROM {table} ORDER BY id"):
            yield dict(row)
    except sqlite3.DatabaseError as exc:
        raise ImportSourceError(f"cannot read claude-mem {table}: {exc}") from None


def _list(value: object) -> list[str]:
    if isinstance(value, list):  # an export holds the JSON array itself
        value = json.dumps(value)
    if not isinstance(value, str) or not value.strip():
        return []
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        return [value.strip()]
    if isinstance(data, list):
        return [
            " ".join(str(x).split())
            for x in data
            if isinstance(x, str | int | float) and str(x).strip()
        ]
    return [value.strip()]


class ClaudeMemSource:
    name = "claude-mem"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        data = env.get("CLAUDE_MEM_DATA_DIR", "").strip()
        return (Path(data).expanduser() if data else home / ".claude-mem") / "claude-mem.db"

    def read(self, path: Path) -> Iterator[Item]:
        if path.suffix.lower() == ".json":
            yield from self._read_export(path)
            return
        conn = _connect(path)
        with contextlib.closing(conn):
            check_schema(conn, path)
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            wanted = (*_TEXT_COLUMNS, "type", "project", "created_at", "created_at_epoch")
            observations = [self._observation(row) for row in _select(conn, "observations", wanted)]
            summaries: list[Row] = []
            if "session_summaries" in tables:
                fields = ("request", "learned", "completed", "next_steps", "notes", "project")
                summaries = list(_select(conn, "session_summaries", (*fields, "created_at")))
        yield from self._with_summaries(observations, summaries)

    def _with_summaries(self, observations: list[Item], summaries: list[Row]) -> Iterator[Item]:
        """The observations, then the summaries: each with only what its observations do not
        already say; an observation a summary restates records it in ``merged_from``."""
        kept = [item for item in observations if item.skip is None]
        said = Statements([f"{item.name}\n{item.fact}" for item in kept]) if summaries else None
        items = [self._summary(row, said, kept) for row in summaries]
        yield from observations
        yield from items

    def _read_export(self, path: Path) -> Iterator[Item]:
        """A JSON file from claude-mem's ``scripts/export-memories.ts``: ``observations`` and
        ``summaries`` lists of the database's own rows."""
        data = load_json(read_text(path, "claude-mem export"), path)
        if not isinstance(data, dict) or not isinstance(data.get("observations"), list):
            raise ImportSourceError(f"{path} is not a claude-mem export (no 'observations' list)")
        records: dict[str, list[Any]] = {"observation": [], "summary": []}
        for kind, rows in (
            ("observation", data["observations"]),
            ("summary", data.get("summaries")),
        ):
            for n, row in enumerate(rows if isinstance(rows, list) else [], 1):
                if not isinstance(row, dict) or not isinstance(row.get("id"), int | str):
                    sid = f"{kind}:#{n}"
                    yield Item(self.name, sid, MemoryType.PROJECT, sid, "", "", skip="not a record")
                    continue
                capped = {k: v[:_CAP] if isinstance(v, str) else v for k, v in row.items()}
                records[kind].append(self._observation(capped) if kind == "observation" else capped)
        yield from self._with_summaries(records["observation"], records["summary"])

    def _observation(self, row: Row) -> Item:
        source_id = f"observation:{row.get('id')}"
        kind = str(row.get("type") or "").strip().lower()
        title = " ".join(str(row.get("title") or "").split())
        narrative = str(row.get("narrative") or row.get("text") or "").strip()
        facts = _list(row.get("facts"))
        created = iso_date(row.get("created_at")) or iso_date(row.get("created_at_epoch"))
        extra = {"source_type": kind or None, "source_project": row.get("project")}
        skip = None
        if kind in _CHANGE_TYPES:
            skip = f"git history: a claude-mem '{kind}' record (the code and git log hold it)"
        elif kind in _SENSITIVE_TYPES:
            skip = f"sensitive: claude-mem marked it '{kind}' (its text is not imported)"
        elif kind and kind not in _KEPT_TYPES:
            skip = f"not a decision or discovery: a claude-mem '{kind}' record"
        if skip is not None:
            shown = source_id if kind in _SENSITIVE_TYPES else title or source_id
            return Item(self.name, source_id, MemoryType.PROJECT, shown, "", "", skip=skip)
        statement = narrative or " ".join(facts) or title
        if not statement:
            return Item(
                self.name, source_id, MemoryType.PROJECT, source_id, "", "", skip="empty record"
            )
        name = title or title_of(statement)
        body = [statement]
        if facts:
            body += ["", *(f"- {f}" for f in facts)]
        why = "a decision recorded by claude-mem" if kind == "decision" else "learned in a session"
        body += ["", f"**Why:** {why} ({created or 'undated'}). Imported from claude-mem."]
        subtitle = " ".join(str(row.get("subtitle") or "").split())
        return Item(
            source=self.name,
            source_id=source_id,
            type=MemoryType.PROJECT,
            name=one_line(name, 100),
            description=one_line(subtitle, 150)
            if subtitle
            else describe(MemoryType.PROJECT, name, statement),
            body="\n".join(body) + "\n",
            created=created,
            fact=statement,
            extra={k: v for k, v in extra.items() if v},
        )

    def _summary(self, row: Row, said: Statements | None, observations: list[Item]) -> Item:
        source_id = f"summary:{row.get('id')}"
        learned = " ".join(str(row.get("learned") or "").split())
        created = iso_date(row.get("created_at"))
        if not learned:
            skip = "ephemeral task state: a session summary (request, completed, next steps)"
            return Item(self.name, source_id, MemoryType.PROJECT, source_id, "", "", skip=skip)
        if said is not None:
            restated = said.restated(learned)
            for i in restated.covered_by:  # one fact, one memory, both provenances
                observations[i].extra.setdefault("merged_from", []).append(source_id)
            if not restated.kept:
                ids = ", ".join(observations[i].source_id for i in restated.covered_by)
                skip = f"a session summary that restates {ids} (merged there)"
                return Item(self.name, source_id, MemoryType.PROJECT, source_id, "", "", skip=skip)
            learned = " ".join(restated.kept)
        extra: dict[str, object] = {"source_type": "session-summary"}
        if row.get("project"):
            extra["source_project"] = str(row.get("project"))
        return fact_item(
            self.name,
            source_id,
            learned,
            origin=f"a claude-mem session summary ({created or 'undated'})",
            type_=MemoryType.PROJECT,
            name=title_of(first_sentence(learned)),
            created=created,
            extra=extra,
        )
