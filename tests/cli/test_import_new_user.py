"""Issue #39's "done when", as a new user runs it: a claude-mem database, a current Gemini CLI
home, a Codex memories dir with ad-hoc requests, a two-user mem0 export and a basic-memory
project imported into one memory dir. Each dry run writes nothing and says what will happen;
afterwards ``memdir doctor`` exits 0, ``memdir prompt`` loads the whole index, and recall finds
imported facts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from benchmarks.import_bench import build_claude_mem

from tests.cli.test_import_cmd import Run
from tests.importers.conftest import FIXTURES


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def _sources(tmp_path: Path) -> dict[str, Path]:
    db = tmp_path / "claude-mem.db"
    build_claude_mem(db, 800)
    codex = tmp_path / "codex"
    shutil.copytree(FIXTURES / "codex", codex)
    notes = codex / "extensions" / "ad_hoc" / "notes"
    (notes / "forget.md").write_text("Forget the earlier note that I prefer pnpm.\n")
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(
        json.dumps(
            [
                {"id": "a1", "memory": "Name is Alice Chen", "user_id": "alice"},
                {"id": "a2", "memory": "Prefers dark mode in every editor", "user_id": "alice"},
                {"id": "b1", "memory": "Prefers light mode", "user_id": "bob"},
            ]
        )
    )
    return {
        "claude-mem": db,
        "gemini": FIXTURES / "gemini-0.61" / ".gemini",
        "codex": codex,
        "mem0": mem0,
        "basic-memory": FIXTURES / "basic-memory",
    }


def test_five_imports_leave_a_whole_index_doctor_ok_and_facts_recalled(
    run: Run, tmp_path: Path
) -> None:
    sources = _sources(tmp_path)
    for source, path in sources.items():
        dry = run.json("import", source, str(path), "--dry-run")
        assert run.files() == {} or source != "claude-mem", "a dry run wrote files"
        assert dry["counts"]["items"] == len(dry["items"]) > 0
        assert all(item["reason"] for item in dry["items"]), source  # every verdict says why
    before = run.files()
    assert before == {}
    for source, path in sources.items():
        done = run.json("import", source, str(path))
        assert done["counts"].get("write", 0) > 0, source
    index = (run.mem / "MEMORY.md").read_text()
    assert len(index.splitlines()) <= 200 and len(index) <= 25_000
    code, prompt, _ = run("prompt")
    assert code == 0 and "Only part of it was loaded" not in prompt
    code, out, err = run("doctor")
    assert code == 0, out + err
    names = " ".join(p.read_text() for p in run.mem.glob("*.md") if p.name != "MEMORY.md")
    assert "pnpm" not in names.lower()  # the Codex request removed the fact it names
    assert "alice" in names and "bob" in names  # two people, kept apart
    for query, expected in (
        ("which port does the Postgres container listen on", "55432"),
        ("release runbook signing tags", "git tag -s"),
    ):
        found = run.json("recall", query)
        texts = json.dumps(found)
        assert expected in texts, (query, texts[:500])
