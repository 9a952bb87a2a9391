"""What every host's hostile-input suite shares: the classes of bad hook JSON each host's hooks
must hold, the check that a hook ended cleanly, and the files it must not have left behind.
Each suite adds what is its host's own (its id key, its wrong types, its transcript shapes)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.adapters.hooks.fakehost import FakeHost

TOKEN = "ghp_R8kq2ZfLw0Tn5YbV3cXa9PdM1sHj7UeG4oQi"  # shaped like a GitHub PAT, not a real one


def bad_inputs(key: str = "session_id", *extra: tuple[str, bytes]) -> list[tuple[str, bytes]]:
    """(name, stdin) for every class: huge, deep, traversal and NUL in the id (``key``),
    non-UTF-8, not an object — then the host's own ``extra`` cases."""
    return [
        ("50 MB", f'{{"{key}": "s", "prompt": "'.encode() + b"x" * (50 * 1024 * 1024) + b'"}'),
        ("200k deep", f'{{"{key}": "s", "x": '.encode() + b"[" * 200_000 + b"]" * 200_000 + b"}"),
        ("traversal", json.dumps({key: "../../../etc/passwd"}).encode()),
        ("NUL", json.dumps({key: "a\x00b"}).encode()),
        ("non-UTF-8", f'{{"{key}": "'.encode() + b'\xff\xfe"}'),
        ("not an object", b"[1, 2, 3]"),
        *extra,
    ]


def assert_clean(run: Any, started: float, limit: float = 10.0) -> None:
    """Exit 0, at most one line on stderr and no traceback, well within the host's timeout."""
    assert run.code == 0
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) <= 1
    assert time.monotonic() - started < limit


def files_outside(host: FakeHost, allowed: Iterable[Path]) -> list[str]:
    """Files under the test's root outside ``allowed`` (memdir's dirs, the host's own)."""
    kept = tuple(allowed)
    return [
        str(p)
        for p in host.root.rglob("*")
        if p.is_file() and not any(a == p or a in p.parents for a in kept)
    ]
