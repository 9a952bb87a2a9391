"""Hostile memory content for every field the UI shows: each payload would run script (or load
a remote resource) if it reached the page unescaped. Used by the TestClient and browser tests."""

from __future__ import annotations

from pathlib import Path

PAYLOADS = (
    "<script>window.__pwned = 1; alert(1)</script>",
    '<img src=x onerror="window.__pwned = 1; alert(1)">',
    '"><svg onload="window.__pwned = 1">',
    "<iframe src=javascript:alert(1)></iframe>",
    "[click](javascript:window.__pwned=1)",
    "![pixel](http://203.0.113.9/track.png)",
    "{{ 7 * 7 }}",
)
ONE = " ".join(PAYLOADS)


def plant_xss(root: Path) -> str:
    """A memory whose name, description, body, validity and index line all carry the payloads;
    returns its relative path."""
    rel = "xss.md"
    body = "\n\n".join(PAYLOADS) + "\n"
    meta = (
        "---\n"
        f"name: '{ONE.replace(chr(39), chr(39) * 2)}'\n"
        f"description: '{ONE.replace(chr(39), chr(39) * 2)}'\n"
        "type: project\n"
        f"retired_reason: '{PAYLOADS[1].replace(chr(39), chr(39) * 2)}'\n"
        "---\n"
    )
    (root / rel).write_text(meta + body, encoding="utf-8")
    index = root / "MEMORY.md"
    old = index.read_text(encoding="utf-8") if index.is_file() else ""
    index.write_text(old + f"- [{PAYLOADS[0]}](xss.md) — {PAYLOADS[1]}\n", encoding="utf-8")
    return rel
