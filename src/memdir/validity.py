"""Memories that stay true: optional validity frontmatter, and what counts as current.

Keys (all optional; a memory without them is current forever, as before):

* ``updated: 2026-11-30`` — when the content was last confirmed or changed (the store stamps it);
* ``expires: 2026-12-31`` — a point-in-time fact; from that date on it is not surfaced;
* ``superseded_by: other.md`` — a newer memory replaces this one (dream's merges and
  corrections write it);
* ``retired: 2026-11-30`` with ``retired_reason: "..."`` — forgotten on purpose, with a reason,
  instead of being deleted: nothing is lost, recall skips it, ``doctor`` lists it.

Invariant: a memory that is expired, superseded or retired is never surfaced by recall and gets
no MEMORY.md entry from a dream; its file stays where it is, readable and listed by ``doctor``.
Unparseable dates are ignored (the memory stays current) rather than hiding a memory by mistake.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memdir.model import MemoryHeader

Status = Literal["current", "expired", "superseded", "retired"]
VALIDITY_KEYS = ("expires", "superseded_by", "retired", "retired_reason")


def parse_date(value: Any) -> dt.date | None:
    """An ISO date (or datetime) from frontmatter; None when absent or unparseable."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


@dataclass(frozen=True, slots=True)
class Validity:
    expires: dt.date | None = None
    superseded_by: str | None = None
    retired: dt.date | None = None
    retired_reason: str | None = None
    retired_flag: bool = False  # ``retired`` was set but is not a date (still retired)

    def status(self, today: dt.date) -> Status:
        if self.retired is not None or self.retired_flag:
            return "retired"
        if self.superseded_by:
            return "superseded"
        if self.expires is not None and today >= self.expires:
            return "expired"
        return "current"

    def is_current(self, today: dt.date) -> bool:
        return self.status(today) == "current"

    def reason(self, today: dt.date) -> str:
        status = self.status(today)
        if status == "retired":
            return self.retired_reason or "retired"
        if status == "superseded":
            return f"superseded by {self.superseded_by}"
        if status == "expired":
            return f"expired on {self.expires}"
        return ""


def validity_of(meta: Mapping[str, Any]) -> Validity:
    """The validity fields of a frontmatter mapping (or a header's ``validity`` mapping)."""
    retired_raw = meta.get("retired")
    retired = parse_date(retired_raw)
    flag = retired is None and retired_raw not in (None, False, "", "false", "no")
    return Validity(
        expires=parse_date(meta.get("expires")),
        superseded_by=_text(meta.get("superseded_by")),
        retired=retired,
        retired_reason=_text(meta.get("retired_reason")),
        retired_flag=flag,
    )


def validity_meta(meta: Mapping[str, Any]) -> dict[str, str]:
    """Only the validity keys of ``meta`` as strings (what a scan keeps in a header)."""
    return {k: str(meta[k]) for k in VALIDITY_KEYS if meta.get(k) not in (None, "")}


def retire_meta(
    meta: Mapping[str, Any],
    *,
    reason: str,
    today: dt.date,
    superseded_by: str | None = None,
) -> dict[str, Any]:
    """``meta`` with the retirement keys set (a new dict; other keys kept in order)."""
    out = dict(meta)
    if superseded_by:
        out["superseded_by"] = superseded_by
    out["retired"] = today.isoformat()
    out["retired_reason"] = " ".join(reason.split())
    return out


def header_validity(header: MemoryHeader) -> Validity:
    return validity_of(dict(header.validity))


def current_only(
    headers: Sequence[MemoryHeader], today: dt.date | None = None
) -> list[MemoryHeader]:
    """The headers that may be surfaced today (local date unless given)."""
    day = today or dt.date.today()
    return [h for h in headers if not h.validity or header_validity(h).is_current(day)]
