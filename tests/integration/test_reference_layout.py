"""memdir opens a memory dir laid out by the reference (Claude Code) and reads it correctly."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.paths import sanitize_path

MEMORIES = {
    "user_role.md": ("User role", "Senior Go engineer, new to the React side", "user"),
    "feedback_testing.md": ("Testing", "Integration tests must hit a real database", "feedback"),
    "project_release.md": (
        "Release freeze",
        "Merge freeze starts 2026-03-05 for mobile",
        "project",
    ),
    "reference_dashboards.md": (
        "Dashboards",
        "Latency dashboard at grafana.internal/d/api",
        "reference",
    ),
}


@pytest.fixture
def reference_home(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    project = tmp_path / "work" / "my-app"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    memory = home / ".claude" / "projects" / sanitize_path(os.path.realpath(project)) / "memory"
    memory.mkdir(parents=True)
    index = []
    for i, (fname, (name, desc, mtype)) in enumerate(MEMORIES.items()):
        (memory / fname).write_text(
            f"---\nname: {name}\ndescription: {desc}\ntype: {mtype}\n---\n\n{desc}.\n\n"
            "**Why:** it came up.\n**How to apply:** keep it in mind.\n"
        )
        os.utime(memory / fname, (1_790_000_000 + i, 1_790_000_000 + i))
        index.append(f"- [{name}]({fname}) — {desc}")
    (memory / "MEMORY.md").write_text("\n".join(index) + "\n")
    return home, project, memory


def run(home: Path, project: Path, *argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    code = main(
        ["--claude", "--json", *argv],
        env={"HOME": str(home)},
        cwd=project,
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else None


def test_where_resolves_the_reference_dir(reference_home: tuple[Path, Path, Path]) -> None:
    home, project, memory = reference_home
    code, data = run(home, project, "where")
    assert code == 0
    assert Path(data["paths"]["memory_dir"]) == memory
    assert not Path(data["paths"]["cache_dir"]).is_relative_to(memory)


def test_list_manifest_and_index_check(reference_home: tuple[Path, Path, Path]) -> None:
    home, project, _memory = reference_home
    code, rows = run(home, project, "list")
    assert code == 0
    assert [(r["path"], r["type"]) for r in rows] == [
        ("reference_dashboards.md", "reference"),
        ("project_release.md", "project"),
        ("feedback_testing.md", "feedback"),
        ("user_role.md", "user"),
    ]
    code, manifest = run(home, project, "manifest")
    assert manifest[0]["line"] == (
        "- [reference] reference_dashboards.md (2026-09-21T14:13:23.000Z): "
        "Latency dashboard at grafana.internal/d/api"
    )
    code, reports = run(home, project, "index", "check")
    assert code == 0 and reports[0]["ok"] is True


def test_prompt_embeds_the_index(reference_home: tuple[Path, Path, Path]) -> None:
    home, project, memory = reference_home
    code, data = run(home, project, "prompt")
    assert code == 0
    prompt = data["prompt"]
    assert str(memory) in prompt
    assert "- [Testing](feedback_testing.md) — Integration tests must hit a real database" in prompt
    for kind in ("user", "feedback", "project", "reference"):
        assert f"<type>{kind}</type>" in prompt or f"<name>{kind}</name>" in prompt


def test_writes_through_memdir_keep_the_reference_index_format(
    reference_home: tuple[Path, Path, Path],
) -> None:
    home, project, memory = reference_home
    code, _ = run(
        home,
        project,
        "add",
        "Deploy",
        "-d",
        "Deploys go through the staging gate",
        "-t",
        "project",
        "-b",
        "Always stage first.",
    )
    assert code == 0
    lines = (memory / "MEMORY.md").read_text().splitlines()
    assert lines[-1] == "- [Deploy](deploy.md) — Deploys go through the staging gate"
    assert len(lines) == 5
    assert run(home, project, "index", "check")[0] == 0
