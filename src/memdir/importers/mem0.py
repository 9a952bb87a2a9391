"""``memdir import mem0 EXPORT.json``: a mem0 / OpenMemory export.

Accepted shapes (all are what mem0's APIs and OpenMemory's export write): a list of memory
records, or an object holding one under ``results`` or ``memories``. A record's text is its
``memory`` (mem0) or ``content`` (OpenMemory); ``id``, ``created_at``, ``user_id``,
``agent_id``, ``categories`` and ``state`` are read when present. Deleted or archived records are
skipped. mem0 stores facts about the user it was given (``user_id``), so a plain fact with a
user and no agent is a user memory ("Prefers window seats" → "User prefers window seats"). An
export of several users (or agents) keeps them apart: each fact names its owner ("alice prefers
window seats") and records it as ``source_user``. OpenMemory's export zip is read in place
(its ``memories.json``; nothing is extracted).
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memdir.errors import ImportSourceError
from memdir.importers.base import MAX_SOURCE_BYTES, Item, iso_date, load_json, read_text
from memdir.importers.facts import fact_item, fact_type
from memdir.model import MemoryType

_GONE = frozenset({"deleted", "archived", "paused"})
_BARE_VERBS = frozenset(
    """is has had likes loves dislikes hates prefers wants needs works lives uses enjoys plans
    name speaks owns lead leads manages""".split()  # noqa: SIM905
)


def records(data: Any, path: Path) -> list[Any]:
    if isinstance(data, dict):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return list(data[key])
        raise ImportSourceError(f"{path}: not a mem0 export (no 'results' or 'memories' list)")
    if isinstance(data, list):
        return data
    raise ImportSourceError(f"{path}: not a mem0 export (a JSON list or object expected)")


def _owner(record: dict[str, Any]) -> str | None:
    """Whose memory a record is: its user, else its agent (``agent:<id>``)."""
    for key, prefix in (("user_id", ""), ("agent_id", "agent:")):
        value = record.get(key)
        if isinstance(value, str | int) and str(value).strip():
            return prefix + " ".join(str(value).split())[:60]
    return None


def _name_owner(text: str, owner: str) -> str:
    if text.startswith("User name "):  # "User name is Alice Chen" → "alice's name is Alice Chen"
        return f"{owner}'s {text[5:]}"
    if text.startswith("User "):
        return f"{owner} {text[5:]}"
    return f"{owner}: {text}"


def _export_text(path: Path) -> str:
    """The export's JSON text; OpenMemory's export is a zip holding ``memories.json``."""
    if path.is_file() and zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                members = [m for m in archive.infolist() if m.filename.endswith(".json")]
                members.sort(key=lambda m: (m.filename.rsplit("/", 1)[-1] != "memories.json",))
                if not members:
                    raise ImportSourceError(f"{path}: a zip with no memories.json")
                member = members[0]
                if member.file_size > MAX_SOURCE_BYTES:
                    raise ImportSourceError(f"{path}: {member.filename} is too large")
                with archive.open(member) as fh:
                    data = fh.read(MAX_SOURCE_BYTES + 1)
            return data.decode("utf-8-sig")
        except (zipfile.BadZipFile, UnicodeDecodeError, OSError) as exc:
            raise ImportSourceError(f"{path}: not a readable OpenMemory export ({exc})") from None
    return read_text(path, "mem0 export")


def _about_user(text: str) -> str:
    first, _, rest = text.partition(" ")
    if first.lower() in _BARE_VERBS:
        return f"User {first.lower()} {rest}".strip()
    return text


class Mem0Source:
    name = "mem0"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        return Path("mem0-export.json")

    def read(self, path: Path) -> Iterator[Item]:
        data = load_json(_export_text(path), path)
        found = records(data, path)
        owners = {_owner(r) for r in found if isinstance(r, dict)} - {None}
        many = len(owners) > 1  # two people's facts must not read as one person's
        for n, record in enumerate(found, 1):
            yield self._item(n, record, many)

    def _item(self, n: int, record: Any, many: bool = False) -> Item:
        if not isinstance(record, dict):
            return Item(
                self.name,
                f"record:{n}",
                MemoryType.PROJECT,
                f"record {n}",
                "",
                "",
                skip="not a memory record",
            )
        text = record.get("memory", record.get("content", record.get("text")))
        raw_id = record.get("id")
        source_id = str(raw_id) if isinstance(raw_id, str | int) and str(raw_id) else ""
        if not isinstance(text, str) or not text.strip():
            sid = source_id or f"record:{n}"
            return Item(
                self.name, sid, MemoryType.PROJECT, sid, "", "", skip="a record with no memory text"
            )
        if not source_id:
            source_id = (
                "text:"
                + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
            )
        state = str(record.get("state") or "").lower()
        if state in _GONE:
            return Item(
                self.name, source_id, MemoryType.PROJECT, source_id, "", "", skip=f"{state} in mem0"
            )
        type_ = fact_type(text)
        user, agent = record.get("user_id"), record.get("agent_id")
        about_user = bool(user) and not agent and _about_user(text.strip()) != text.strip()
        if (type_ is MemoryType.PROJECT or about_user) and user and not agent:
            # mem0 keeps facts about the user it was given: "Name is Alice Chen" is about them
            type_, text = MemoryType.USER, _about_user(text.strip())
        extra: dict[str, object] = {}
        owner = _owner(record)
        if owner is not None:
            extra["source_user"] = owner
            if many and type_ is MemoryType.USER:  # "User prefers…" → "alice prefers…"
                text = _name_owner(text, owner)
        categories = record.get("categories")
        if (
            isinstance(categories, list)
            and all(isinstance(c, str) for c in categories)
            and categories
        ):
            extra["tags"] = categories[:10]
        return fact_item(
            self.name,
            source_id,
            text,
            origin="a mem0 export",
            type_=type_,
            created=iso_date(record.get("created_at")),
            extra=extra,
        )
