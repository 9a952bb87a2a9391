from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memdir.frontmatter import dump
from memdir.scan import scan_headers
from memdir.validity import current_only, retire_meta, validity_of

TODAY = dt.date(2026, 11, 30)


@pytest.mark.parametrize(
    ("meta", "status"),
    [
        ({}, "current"),
        ({"expires": "2026-12-01"}, "current"),
        ({"expires": "2026-11-30"}, "expired"),
        ({"expires": dt.date(2026, 1, 1)}, "expired"),
        ({"expires": "not a date"}, "current"),  # unparseable: never hide a memory by mistake
        ({"superseded_by": "other.md"}, "superseded"),
        ({"superseded_by": "  "}, "current"),
        ({"retired": "2026-11-01", "retired_reason": "wrong"}, "retired"),
        ({"retired": True}, "retired"),
        ({"retired": False}, "current"),
    ],
)
def test_status(meta: dict[str, object], status: str) -> None:
    assert validity_of(meta).status(TODAY) == status


def test_retire_meta_keeps_other_keys_in_order() -> None:
    meta = {"name": "A", "description": "d", "type": "user", "custom": 1}
    out = retire_meta(meta, reason=" merged \n into b ", today=TODAY, superseded_by="b.md")
    assert list(out) == [*meta, "superseded_by", "retired", "retired_reason"]
    assert out["retired_reason"] == "merged into b" and meta == {
        "name": "A",
        "description": "d",
        "type": "user",
        "custom": 1,
    }


def test_scan_headers_carry_validity(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(dump({"name": "A", "expires": "2020-01-01"}, "x\n"))
    (tmp_path / "b.md").write_text(dump({"name": "B"}, "y\n"))
    headers = scan_headers(tmp_path).headers
    assert {h.filename: h.validity for h in headers} == {
        "a.md": (("expires", "2020-01-01"),),
        "b.md": (),
    }
    assert [h.filename for h in current_only(headers, TODAY)] == ["b.md"]
