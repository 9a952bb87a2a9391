"""Verdicts against a real git history: current, changed, moved, gone — and what is not one."""

from __future__ import annotations

from pathlib import Path

from memdir.evidence import screen
from memdir.evidence.verdict import Evidence
from tests.evidence.conftest import DB_V1, DB_V2, Repo


def memory(dir_: Path, name: str, body: str, repo: Repo) -> Path:
    path = dir_ / f"{name}.md"
    dir_.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {name}\ntype: project\n---\n{body}\n")
    repo.written_now(path)
    return path


def states(ev: Evidence) -> dict[str, str]:
    return {v.anchor: v.state for v in ev.verdicts}


def check(path: Path, repo: Repo, cache: Path | None = None, **kw: object) -> Evidence:
    [out] = screen([path], repo.root, cache, budget=10.0, **kw)  # type: ignore[arg-type]
    return out.evidence


def test_the_memory_about_psycopg2_is_held_back_after_the_switch_to_asyncpg(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("db", {"src/db.py": DB_V1, "package.json": '{"devDependencies": {"jest": "29"}}'})
    mem = memory(
        tmp_path / "m", "db", "`src/db.py` uses `psycopg2` in `connect_db`; tests use Jest.", repo
    )
    before = check(mem, repo)
    assert states(before) == {
        "src/db.py": "current", "psycopg2": "current", "connect_db": "current", "jest": "current"
    }  # fmt: skip
    assert not before.held_back and before.caveat() == ""

    vitest = '{"devDependencies": {"vitest": "2"}}'
    repo.commit("switch src/db.py to asyncpg", {"src/db.py": DB_V2, "package.json": vitest})
    after = check(mem, repo)
    assert states(after) == {
        "src/db.py": "current",  # the file is still there; what it names inside changed
        "psycopg2": "gone",
        "connect_db": "changed",
        "jest": "gone",
    }
    assert after.held_back
    changed = next(v for v in after.verdicts if v.anchor == "connect_db")
    assert "src/db.py" in changed.detail and "switch src/db.py to asyncpg" in changed.detail
    assert "psycopg2" in after.note("db", "db.md")


def test_a_memory_that_rules_something_out_is_not_held_back_for_its_absence(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = memory(tmp_path / "m", "never", "Never add `psycopg2` back: it leaked connections.", repo)
    repo.commit("asyncpg", {"src/db.py": DB_V2})
    ev = check(mem, repo)
    assert states(ev) == {"psycopg2": "gone"}
    assert not ev.held_back and not ev.stale


def test_a_reformat_or_an_edit_elsewhere_is_not_a_change(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = memory(tmp_path / "m", "close", "`close_db` closes the connection it is given.", repo)
    reformatted = DB_V1.replace("def close_db(conn):", "def close_db( conn ):") + "\n\nX = 1\n"
    repo.commit(
        "reformat and add X", {"src/db.py": reformatted.replace('"""Open a connection."""', "")}
    )
    assert states(check(mem, repo)) == {"close_db": "current"}


def test_a_renamed_file_and_a_moved_function_are_moved_not_gone(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1, "src/util.py": "def slugify(x):\n    return x\n"})
    mem = memory(
        tmp_path / "m",
        "where",
        "Connections live in `src/db.py`; `slugify` is in src/util.py.",
        repo,
    )
    moved = {"src/db.py": None, "src/storage/db.py": DB_V1, "src/util.py": None}
    repo.commit("move db", {**moved, "src/text.py": "def slugify(x):\n    return x\n"})
    ev = check(mem, repo)
    assert states(ev) == {"src/db.py": "moved", "src/util.py": "moved", "slugify": "moved"}
    by = {v.anchor: v.detail for v in ev.verdicts}
    assert "src/storage/db.py" in by["src/db.py"] and "src/text.py" in by["slugify"]
    assert not ev.held_back and "moved" in ev.caveat()


def test_what_was_never_in_the_repository_anchors_nothing(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = memory(
        tmp_path / "m", "git", "Publish with `git push --set-upstream` and `ls -la`.", repo
    )
    ev = check(mem, repo)
    assert ev.verdicts == []
    assert {s.split(":")[0] for s in ev.skipped} == {"git", "ls"}


def test_a_preference_without_anchors_is_unaffected(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = memory(tmp_path / "m", "terse", "The user likes terse answers without summaries.", repo)
    repo.commit("asyncpg", {"src/db.py": DB_V2})
    ev = check(mem, repo)
    assert ev.verdicts == [] and not ev.held_back and ev.caveat() == ""


def test_confirming_re_anchors_at_head(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = memory(tmp_path / "m", "db", "`connect_db` returns a psycopg2 connection.", repo)
    head = repo.commit("asyncpg", {"src/db.py": DB_V2})
    assert states(check(mem, repo)) == {"connect_db": "changed"}
    mem.write_text(mem.read_text().replace("type: project", f"type: project\nverified: {head}"))
    assert states(check(mem, repo)) == {"connect_db": "current"}


def test_the_cache_answers_the_second_check_and_a_new_commit_checks_again(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = memory(tmp_path / "m", "db", "`psycopg2` is the driver.", repo)
    cache = tmp_path / "cache"
    assert states(check(mem, repo, cache)) == {"psycopg2": "current"}
    assert (cache / "evidence.json").exists()
    assert states(check(mem, repo, cache)) == {"psycopg2": "current"}
    repo.commit("asyncpg", {"src/db.py": DB_V2})
    assert states(check(mem, repo, cache)) == {"psycopg2": "gone"}


def test_diff_checks_against_another_commit(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = memory(tmp_path / "m", "db", "`psycopg2` is the driver.", repo)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("asyncpg", {"src/db.py": DB_V2})
    repo.git("checkout", "-q", "main")
    assert states(check(mem, repo)) == {"psycopg2": "current"}
    assert states(check(mem, repo, rev="feature")) == {"psycopg2": "gone"}
