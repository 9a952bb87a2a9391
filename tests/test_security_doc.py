"""docs/security.md names the test behind each property; every name it gives must exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_REF = re.compile(r"`(tests/[\w/]+\.py)(?:::([\w*]+))?`")
_SHORT = re.compile(r"`::([\w*]+)`")


def test_every_test_named_in_security_md_exists() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    checked = 0
    for line in text.splitlines():
        current: str | None = None
        for match in re.finditer(f"{_REF.pattern}|{_SHORT.pattern}", line):
            path, name, short = match.group(1), match.group(2), match.group(3)
            if path is not None:
                current = path
            name = name or short
            assert current is not None, line
            source = (ROOT / current).read_text(encoding="utf-8")
            if name is not None:
                pattern = re.escape(name).replace(r"\*", r"\w*")
                assert re.search(rf"def {pattern}\(", source), f"{current}::{name}"
            checked += 1
    assert checked >= 30
