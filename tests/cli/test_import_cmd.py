"""``memdir import`` as a new user runs it: dry run, import, re-run, undo; hostile input gets one
line on stderr and leaves the dir as it was."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from tests.importers.claude_mem_schema import add_observation, create_db
from tests.importers.conftest import FIXTURES

AWS = "AKIA" + "IOSFODNN7EXAMPLQ"


class Run:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.mem = tmp_path / "mem"
        self.home.mkdir()
        self.cwd = tmp_path

    def __call__(self, *argv: str, fmt: str = "--text") -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.home), "MEMDIR_HOME": str(self.home / ".memdir")}
        code = main(
            ["--dir", str(self.mem), fmt, *argv], env=env, cwd=self.cwd, stdout=out, stderr=err
        )
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str) -> Any:
        code, out, err = self(*argv, fmt="--json")
        assert code == 0, err
        return json.loads(out)

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.mem.glob("*.md")} if self.mem.exists() else {}


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def claude_mem_db(path: Path) -> Path:
    conn = create_db(path)
    add_observation(
        conn,
        type="decision",
        title="Billing uses Postgres 16",
        narrative="Billing uses Postgres 16 for logical replication.",
    )
    add_observation(
        conn,
        type="decision",
        title="Billing uses Postgres 16",
        narrative="Billing uses Postgres 16 for logical replication.",
    )
    add_observation(
        conn,
        type="discovery",
        title="Staging key",
        narrative=f"The staging key is {AWS} for uploads.",
    )
    add_observation(conn, type="feature", title="Added SSO", narrative="Added SSO login.")
    conn.commit()
    return path


def test_dry_run_import_rerun_and_undo(run: Run, tmp_path: Path) -> None:
    db = claude_mem_db(tmp_path / "claude-mem.db")
    code, out, _ = run("import", "claude-mem", str(db), "--dry-run")
    assert (
        code == 0 and "would write 1, merged 1, skipped 2" in out and "nothing was written" in out
    )
    assert run.files() == {}
    result = run.json("import", "claude-mem", str(db))
    assert result["counts"]["write"] == 1 and result["counts"]["skipped_credential"] == 1
    assert AWS not in json.dumps(result)
    written = run.files()
    (name,) = [n for n in written if n != "MEMORY.md"]
    assert b"source: claude-mem" in written[name] and b"source_id: observation:1" in written[name]
    assert AWS.encode() not in b"".join(written.values())
    again = run.json("import", "claude-mem", str(db))
    assert again["counts"].get("write", 0) == 0 and run.files() == written
    code, out, _ = run("import", "--undo")
    assert code == 0 and "removed 2 file(s)" in out  # the memory and the MEMORY.md it created
    assert run.files() == {}


def test_every_fixture_imports_and_is_listed_in_the_runs(run: Run) -> None:
    for source, path in [
        ("gemini", "gemini/GEMINI.md"),
        ("mcp-memory", "mcp-memory/memory-graph.jsonl"),
        ("mem0", "mem0/get_all_v2.json"),
        ("basic-memory", "basic-memory"),
        ("codex", "codex"),
        ("claude-code", "claude-code"),
    ]:
        result = run.json("import", source, str(FIXTURES / path))
        assert result["counts"]["write"] >= 1, source
    runs = run.json("import", "--runs")["runs"]
    assert [r["source"] for r in runs][:2] == ["claude-code", "codex"]
    index = (run.mem / "MEMORY.md").read_text()
    assert all(f"({p.name})" in index for p in run.mem.glob("*.md") if p.name != "MEMORY.md")


@pytest.mark.parametrize(
    ("source", "content", "message"),
    [
        ("mem0", "[" * 200_000 + "]" * 200_000, "nests deeper than"),
        ("claude-mem", "SQLite format 3\x00 but not really", "not an SQLite database"),
        ("gemini", "no memories here", "holds no memories"),
    ],
)
def test_hostile_input_is_one_line_on_stderr_and_nothing_written(
    run: Run, tmp_path: Path, source: str, content: str, message: str
) -> None:
    run.mem.mkdir()
    (run.mem / "keep.md").write_text("---\nname: Keep\ndescription: d\ntype: user\n---\nbody\n")
    before = run.files()
    path = tmp_path / "input"
    path.write_text(content)
    code, out, err = run("import", source, str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert run.files() == before


def test_a_newer_claude_mem_schema_is_refused(run: Run, tmp_path: Path) -> None:
    db = claude_mem_db(tmp_path / "c.db")
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_versions (version, applied_at) VALUES (999, 'x')")
    code, _, err = run("import", "claude-mem", str(db))
    assert code == 2 and "schema version 999 is newer" in err and run.files() == {}


def test_no_source_and_no_undo_is_a_usage_error(run: Run) -> None:
    code, _, err = run("import")
    assert code == 2 and "give a source" in err


def test_records_with_nul_or_lone_surrogates_are_skipped_and_printed_safely(
    run: Run, tmp_path: Path
) -> None:
    export = tmp_path / "mem0.json"
    export.write_text(
        '[{"id": "a", "memory": "Prefers tabs \\u0000 over spaces"},'
        ' {"id": "b", "memory": "Likes \\udc80 emoji"},'
        ' {"id": "c", "memory": "Prefers dark mode in every editor"}]'
    )
    for fmt in ("--text", "--json"):
        code, out, err = run("import", "mem0", str(export), "--dry-run", fmt=fmt)
        assert code == 0 and err == ""
        assert "NUL" in out and "surrogate" in out
    result = run.json("import", "mem0", str(export))
    assert result["counts"]["write"] == 1 and result["counts"]["skipped_invalid"] == 2


def test_export_then_import_bundle_restores_byte_for_byte_and_undoes(
    run: Run, tmp_path: Path
) -> None:
    from memdir.bundle import export_bundle

    source = tmp_path / "source"
    source.mkdir()
    files = {
        "deploy.md": "---\nname: Deploy with make ship\ndescription: releases\ntype: project\n"
        "---\nWe deploy with `make ship`.\n",
        "数据库.md": "---\nname: 数据库\ndescription: db\ntype: reference\n---\nPG 16\r\n",
        "MEMORY.md": "- [Deploy](deploy.md) — releases\n",
    }
    for rel, text in files.items():
        (source / rel).write_bytes(text.encode())
    archive = tmp_path / "export.tar.gz"
    export_bundle(source, archive)
    dry = run.json("import", "bundle", str(archive), "--dry-run")
    assert dry["snapshot"] is None and sorted(dry["result"]["written"]) == sorted(files)
    assert run.files() == {}
    result = run.json("import", "bundle", str(archive))
    assert run.files() == {rel: text.encode() for rel, text in files.items()}
    again = run.json("import", "bundle", str(archive))  # a re-run changes nothing
    assert again["result"]["written"] == [] and len(again["result"]["skipped"]) == len(files)
    assert again["snapshot"] is None  # ... and records no run (issue #39.7)
    code, _, err = run("import", "bundle", str(tmp_path / "missing.tar.gz"))
    assert code != 0 and "missing.tar.gz" in err
    [listed] = run.json("import", "--runs")["runs"]  # the one run that wrote something
    assert listed["id"] == result["snapshot"] and listed["counts"]["write"] == len(files)
    code, out, _ = run("import", "--runs")
    assert f"({len(files)} written)" in out
    run.json("import", "--undo")  # the last import that wrote something
    assert run.files() == {}


def test_import_bundle_refuses_a_hostile_archive_in_one_line(run: Run, tmp_path: Path) -> None:
    import io as _io
    import tarfile

    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"owned"
        info = tarfile.TarInfo("../../escape.md")
        info.size = len(data)
        tar.addfile(info, _io.BytesIO(data))
    code, _, err = run("import", "bundle", str(archive))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "escape.md").exists() and run.files() == {}


def test_undo_with_nothing_imported_says_so(run: Run) -> None:
    code, _, err = run("import", "--undo")
    assert code == 2 and "no import to undo" in err


@pytest.mark.parametrize("source", ["mem0", "mcp-memory", "bundle"])
def test_sources_without_a_usual_place_need_a_path(run: Run, source: str) -> None:
    code, _, err = run("import", source)
    assert code == 2 and "needs the file's path" in err


def test_an_import_killed_midway_is_undone_whole(run: Run, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    run.mem.mkdir()
    (run.mem / "keep.md").write_text("---\nname: Keep\ndescription: d\ntype: user\n---\nbody\n")
    before = run.files()
    export = tmp_path / "mem0.json"
    records = [
        {"id": f"r{n}", "memory": f"Worker w{n}x drains queue q{n}z every {n} minutes"}
        for n in range(20_000)  # writing them takes seconds: the kill lands mid-import
    ]
    export.write_text(json.dumps(records))
    env = {**os.environ, "HOME": str(run.home), "MEMDIR_HOME": str(run.home / ".memdir")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "--dir", str(run.mem), "import", "mem0", str(export)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while (
        len(list(run.mem.glob("*.md"))) < 30 and proc.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.01)
    assert proc.poll() is None, "the import ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(run.files()) > len(before)  # it was killed with files written
    code, _, err = run("import", "--undo", "--force")
    assert code == 0, err
    assert run.files() == before


def test_a_big_import_leaves_an_index_within_its_limits_and_undo_removes_it(
    run: Run, tmp_path: Path
) -> None:
    """Issue #39.1: 2,295 imported memories made a MEMORY.md of 2,295 lines; doctor exited 1
    and the prompt loaded a random prefix of it."""
    jsonl = tmp_path / "memory.jsonl"
    areas = ["billing", "search", "deploys", "auth", "payments", "mobile", "data", "infra"]
    rows = [
        {
            "type": "entity",
            "name": f"{areas[i % 8]}-component-{i}",
            "entityType": "component",
            "observations": [f"Component {i} of {areas[i % 8]} runs on port {8000 + i}"],
        }
        for i in range(600)
    ]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run.json("import", "mcp-memory", str(jsonl))
    assert result["counts"]["write"] == 600
    assert "section files" in result["index"]
    index = (run.mem / "MEMORY.md").read_text()
    assert len(index.splitlines()) <= 200 and len(index) <= 25_000
    code, out, _ = run("prompt")
    assert code == 0 and "Only part of it was loaded" not in out
    assert "index/project.md" in out  # the agent is shown where the rest is listed
    code, out, err = run("doctor")
    assert code == 0, out + err
    code, out, _ = run("import", "--undo")
    assert code == 0
    assert not (run.mem / "index").exists() and run.files() == {}
