"""``memdir import mcp-memory memory.jsonl``: the MCP reference memory server's knowledge graph.

Format (``modelcontextprotocol/servers``, ``src/memory``): one JSON object a line, either
``{"type": "entity", "name", "entityType", "observations": [...]}`` or
``{"type": "relation", "from", "to", "relationType"}``. Each entity becomes one memory named
after it: its observations as bullets, its outgoing relations under **Relations:**. Observations
the memory rules say not to keep (that work-log style "Successfully completed issue #941 on July
3" lines) are skipped one by one and counted; an entity with nothing left is skipped. Entity
types decide the memory type: a person or user is a user memory, a tool, service, document or
URL a reference, anything else a project memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import ImportSourceError
from memdir.importers.base import MAX_ITEM_CHARS, Item, load_json, one_line, text_lines
from memdir.importers.facts import describe, fact_type
from memdir.importers.keep import not_to_keep
from memdir.model import MemoryType
from memdir.sameness import normalise
from memdir.team.secrets import scan

_USER = frozenset({"person", "user", "people", "human", "developer", "me"})
_TASK = frozenset({"task", "todo", "session", "milestone"})
_REFERENCE = frozenset({"tool", "service", "document", "url", "website", "api", "resource", "link"})


@dataclass
class _Entity:
    name: str
    kind: str
    line: int
    observations: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    also: list[str] = field(default_factory=list)  # entities holding some of the same facts
    absorbed_by: list[str] = field(default_factory=list)


def _record_kind(record: object) -> str | None:
    """ "entity" or "relation": by ``type`` (the reference server), ``_type`` (forks such as
    mcp-think-tank) or, with neither, by the keys the record has."""
    if not isinstance(record, dict):
        return None
    kind = record.get("type", record.get("_type"))
    if kind in ("entity", "relation"):
        return str(kind)
    if kind is None and "observations" in record and "name" in record:
        return "entity"
    if kind is None and {"from", "to", "relationType"} <= record.keys():
        return "relation"
    return None


def _type(kind: str) -> MemoryType:
    low = kind.strip().lower()
    if low in _USER:
        return MemoryType.USER
    if low in _REFERENCE:
        return MemoryType.REFERENCE
    return MemoryType.PROJECT


# one observation this long is left out on its own (an entity's memory stays a note)
MAX_OBSERVATION_CHARS = MAX_ITEM_CHARS // 8


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


class McpMemorySource:
    name = "mcp-memory"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        return Path("memory.jsonl")

    def read(self, path: Path) -> Iterator[Item]:
        entities: dict[str, _Entity] = {}
        holder: dict[str, str] = {}  # a fact (normalised) -> the entity that holds it
        skipped: list[Item] = []
        relations: list[tuple[str, str, str]] = []
        for n, line in enumerate(text_lines(path, "memory.jsonl"), 1):
            if not line.strip():
                continue
            if len(line) > MAX_ITEM_CHARS * 4:
                sid = f"line:{n}"
                skipped.append(
                    Item(
                        self.name,
                        sid,
                        MemoryType.PROJECT,
                        sid,
                        "",
                        "",
                        skip=f"line {n} is {len(line)} characters",
                    )
                )
                continue
            record = load_json(line, path, line=n)
            kind_of = _record_kind(record)
            if kind_of is None:
                raise ImportSourceError(f"{path}:{n}: not an MCP memory entity or relation")
            if kind_of == "relation":
                parts = [record.get(k) for k in ("from", "relationType", "to")]
                if all(isinstance(p, str) and p for p in parts):
                    relations.append((parts[0], parts[1], parts[2]))
                continue
            name, kind = record.get("name"), record.get("entityType", "")
            obs = record.get("observations", [])
            if not isinstance(name, str) or not name.strip() or not isinstance(obs, list):
                raise ImportSourceError(
                    f"{path}:{n}: an entity needs a name and a list of observations"
                )
            entity = entities.setdefault(name, _Entity(name, str(kind or "entity"), n))
            if entity.kind.strip().lower() in _TASK:
                continue  # skipped whole below; its status lines are not judged one by one
            # one scan of the whole entity; each observation alone only when it found one
            suspect = bool(scan("\n".join(t for t in obs if isinstance(t, str))))
            for text in obs:
                if not isinstance(text, str) or not text.strip():
                    continue
                flat = " ".join(text.split())
                part = f"entity:{name}#{_digest(flat)}"
                if len(flat) > MAX_OBSERVATION_CHARS:  # left out alone: the rest is kept
                    long = f"an observation of {len(flat)} characters, left out of {name!r}"
                    skipped.append(
                        Item(self.name, part, MemoryType.PROJECT, part, "", "", skip=long)
                    )
                elif suspect and scan(flat):  # judged alone: the plan refuses it as a credential
                    skipped.append(
                        Item(self.name, part, MemoryType.PROJECT, f"an observation of {name}",
                             f"left out of {name}", flat, filter=False)
                    )  # fmt: skip
                elif why := not_to_keep(flat):
                    skipped.append(
                        Item(
                            self.name,
                            part,
                            MemoryType.PROJECT,
                            one_line(flat, 80),
                            "",
                            "",
                            skip=why,
                        )
                    )
                elif (first := holder.setdefault(normalise(flat), name)) != name:
                    # the same fact under two entities is one memory (issue #39.11): it stays
                    # with the first, which records the other
                    if name not in entities[first].also:
                        entities[first].also.append(name)
                        entity.absorbed_by.append(first)
                elif flat not in entity.observations:
                    entity.observations.append(flat)
        for src, rel, dst in relations:
            if src in entities:
                entities[src].relations.append(f"- {rel} [[{dst}]]")
        yield from skipped
        for entity in entities.values():
            yield self._item(entity)

    def _item(self, entity: _Entity) -> Item:
        source_id = f"entity:{entity.name}"
        named = entity.kind.casefold() in entity.name.casefold()  # "Decision: Use Rust"
        name = one_line(entity.name if named else f"{entity.name} ({entity.kind})", 100)
        if entity.kind.strip().lower() in _TASK:
            skip = f"ephemeral task state: a {entity.kind} entity (its status changes; not a fact)"
            return Item(self.name, source_id, MemoryType.PROJECT, name, "", "", skip=skip)
        if not entity.observations:
            why = "no observations left to keep"
            if entity.absorbed_by:
                why = f"its facts are already imported under {', '.join(entity.absorbed_by)}"
            return Item(self.name, source_id, MemoryType.PROJECT, name, "", "", skip=why)
        type_ = _type(entity.kind)
        rules = sum(fact_type(o) is MemoryType.FEEDBACK for o in entity.observations)
        if type_ is not MemoryType.USER and rules * 2 > len(entity.observations):
            type_ = MemoryType.FEEDBACK  # mostly rules someone stated: how to work, not a fact
        body = [f"What is known about {entity.name}, a {entity.kind}:", ""]
        body += [f"- {o}" for o in entity.observations]
        if entity.relations:
            body += ["", "**Relations:**", *entity.relations]
        if entity.also:
            body += ["", f"Also recorded under: {', '.join(entity.also)}."]
        body += ["", "**Why:** observations kept by the MCP memory server (memory.jsonl)."]
        description = describe(type_, name, entity.observations[0])
        return Item(
            source=self.name,
            source_id=source_id,
            type=type_,
            name=name,
            description=description,
            body="\n".join(body) + "\n",
            filter=False,
            extra={
                "source_type": entity.kind,
                **({"merged_from": [f"entity:{n}" for n in entity.also]} if entity.also else {}),
            },
        )
