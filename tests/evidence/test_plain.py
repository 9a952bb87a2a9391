"""Outside git: the files a memory names, compared with the first check (issue #37)."""

from __future__ import annotations

from pathlib import Path

from memdir.evidence import screen


def write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: x\ndescription: x\ntype: project\n---\n{body}\n")
    return path


def states(path: Path, root: Path, cache: Path) -> dict[str, str]:
    [out] = screen([path], root, cache, budget=5)
    return {v.anchor: v.state for v in out.evidence.verdicts}


def test_a_deleted_or_rewritten_file_is_seen_outside_git(tmp_path: Path) -> None:
    root, cache = tmp_path / "plain", tmp_path / "cache"
    (root / "src").mkdir(parents=True)
    (root / "src" / "db.py").write_text("import psycopg2\n\ndef connect_db(url):\n    pass\n")
    (root / "src" / "util.py").write_text("def slugify(x):\n    return x\n")
    mem = write(tmp_path / "m" / "db.md", "`src/db.py` uses psycopg2; helpers in src/util.py.")
    assert states(mem, root, cache) == {"src/db.py": "current", "src/util.py": "current"}

    (root / "src" / "db.py").write_text("import asyncpg\n\nasync def connect_db(url):\n    pass\n")
    (root / "src" / "util.py").unlink()
    assert states(mem, root, cache) == {"src/db.py": "changed", "src/util.py": "gone"}
    [out] = screen([mem], root, cache)
    assert out.evidence.held_back and "first check" in out.evidence.skipped[-1]


def test_outside_git_no_path_leads_out_of_the_project(tmp_path: Path) -> None:
    root, cache = tmp_path / "plain", tmp_path / "cache"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("s3cret\n")
    (root / "link").symlink_to(tmp_path)
    mem = write(tmp_path / "m" / "x.md", "See `link/secret.txt` and `../secret.txt`.")
    [out] = screen([mem], root, cache)
    assert out.evidence.verdicts == []
    assert any("outside the project" in s for s in out.evidence.skipped)
    assert any("(..)" in s for s in out.evidence.skipped)
    assert (
        "s3cret" not in (cache / "evidence-plain.json").read_text()
        if (cache / "evidence-plain.json").exists()
        else True
    )
