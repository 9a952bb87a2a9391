from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

from memdir import frontmatter
from memdir.cli.main import main
from memdir.consolidate.forget import retire
from memdir.errors import DreamError, MemoryNotFoundError
from memdir.recall.engine import MemoryRecall
from memdir.recall.keyword import KeywordSelector
from memdir.store import MemoryStore
from tests.consolidate.conftest import put


def test_retire_keeps_the_body_and_drops_the_index_entry(store: MemoryStore) -> None:
    store.create("Editor", "user edits in Helix", "user", "The user edits code in Helix.\n")
    store.create("Shell", "user uses fish", "user", "fish shell everywhere.\n")
    body = frontmatter.parse(store.read_text("editor.md")).body
    retire(store, "editor.md", reason="switched to Zed", superseded_by="shell.md")
    parsed = frontmatter.parse(store.read_text("editor.md"))
    assert parsed.body == body
    assert parsed.meta["retired_reason"] == "switched to Zed"
    assert parsed.meta["superseded_by"] == "shell.md"
    index = (store.root / "MEMORY.md").read_text()
    assert "(editor.md)" not in index and "(shell.md)" in index
    store.rebuild_index()
    assert "(editor.md)" not in (store.root / "MEMORY.md").read_text()


def test_retire_needs_a_reason_and_a_real_target(store: MemoryStore) -> None:
    store.create("Editor", "user edits in Helix", "user", "Helix.\n")
    with pytest.raises(DreamError):
        retire(store, "editor.md", reason="  ")
    with pytest.raises(DreamError):
        retire(store, "editor.md", reason="x", superseded_by="nope.md")
    with pytest.raises(MemoryNotFoundError):
        retire(store, "missing.md", reason="x")


async def test_recall_skips_retired_superseded_and_expired(store: MemoryStore) -> None:
    root = store.root
    put(root, "live.md", "Deploy checklist", "deploy checklist steps", "Deploy checklist body.\n")
    put(
        root,
        "old.md",
        "Deploy checklist v1",
        "deploy checklist steps old",
        "Deploy checklist.\n",
        superseded_by="live.md",
    )
    put(
        root,
        "gone.md",
        "Deploy checklist v0",
        "deploy checklist steps older",
        "Deploy.\n",
        retired="2026-01-01",
        retired_reason="wrong",
    )
    put(
        root,
        "trip.md",
        "Deploy freeze trip",
        "deploy checklist during the trip",
        "Trip.\n",
        expires="2020-01-01",
    )
    put(
        root,
        "later.md",
        "Deploy checklist later",
        "deploy checklist steps future",
        "Later.\n",
        expires=(dt.date.today() + dt.timedelta(days=30)).isoformat(),
    )
    recall = MemoryRecall(root, KeywordSelector())
    names = {h.filename for h in recall.candidates("deploy checklist steps", None)}
    assert names == {"live.md", "later.md"}
    found = await recall.find("deploy checklist steps")
    assert {m.filename for m in found} <= {"live.md", "later.md"} and found


def test_doctor_lists_inactive_memories_without_failing(store: MemoryStore) -> None:
    store.create("Editor", "user edits in Helix", "user", "Helix.\n")
    retire(store, "editor.md", reason="switched to Zed")
    out = io.StringIO()
    code = main(
        ["--dir", str(store.root), "--json", "doctor"],
        env={"HOME": str(store.root)},
        stdout=out,
        stderr=io.StringIO(),
    )
    import json

    report = json.loads(out.getvalue())
    assert report["inactive"] == [
        {"path": "editor.md", "status": "retired", "reason": "switched to Zed"}
    ]
    assert not [p for p in report["problems"] if p["path"] == "editor.md"]
    assert code == 0, report["problems"]


def test_cli_retire(store: MemoryStore, tmp_path: Path) -> None:
    store.create("Editor", "user edits in Helix", "user", "Helix.\n")
    out = io.StringIO()
    argv = ["--dir", str(store.root), "--json", "retire", "editor.md", "--reason", "moved on"]
    assert main(argv, env={"HOME": str(tmp_path)}, stdout=out, stderr=io.StringIO()) == 0
    assert "moved on" in store.read_text("editor.md")
