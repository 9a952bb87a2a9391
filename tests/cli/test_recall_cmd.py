"""``memdir reindex`` and the progress bar: drawn on a terminal, silent when piped."""

from __future__ import annotations

import io
import json
from pathlib import Path

from memdir.cli.main import main
from memdir.cli.recall_cmd import ProgressBar


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(tmp_path: Path, *argv: str, stderr: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), stderr if stderr is not None else io.StringIO()
    code = main(list(argv), env={"HOME": str(tmp_path / "h")}, cwd=tmp_path, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _add(tmp_path: Path, name: str, description: str) -> None:
    code, _out, err = _run(
        tmp_path, "--dir", "mem", "add", name, "-d", description, "-t", "project", "-b", "body"
    )
    assert code == 0, err


def test_reindex_reports_json_and_stays_quiet_when_piped(tmp_path: Path) -> None:
    _add(tmp_path, "Merge freeze", "No merges until the mobile release")
    _add(tmp_path, "Staging", "Deploy to staging with make deploy-staging")
    code, out, err = _run(tmp_path, "--dir", "mem", "reindex")
    assert code == 0 and err == ""
    report = json.loads(out)
    assert (report["memories"], report["added"], report["rebuilt"]) == (2, 2, True)
    code, out, _ = _run(tmp_path, "--dir", "mem", "reindex")
    assert json.loads(out)["added"] == 0


def test_progress_is_drawn_on_a_terminal(tmp_path: Path) -> None:
    _add(tmp_path, "Merge freeze", "No merges until the mobile release")
    tty = Tty()
    code, _out, _err = _run(tmp_path, "--dir", "mem", "reindex", stderr=tty)
    assert code == 0
    assert "\rembedding 1/1 (100%)" in tty.getvalue() and tty.getvalue().endswith("\n")


def test_progress_bar_text() -> None:
    stream = Tty()
    bar = ProgressBar(stream)
    bar(250, 1000)
    bar.close()
    assert stream.getvalue().startswith("\rembedding 250/1,000 (25%), ")
    assert stream.getvalue().endswith("\n")
    silent = Tty()
    ProgressBar(silent).close()
    assert silent.getvalue() == ""


def test_explain_leaves_out_retired_memories_as_recall_does(tmp_path: Path) -> None:
    """Regression: --explain ranked every indexed memory, so a retired one showed "relevant"."""
    _add(tmp_path, "Deploy day", "Deploys go out on Tuesdays")
    _add(tmp_path, "Staging", "Deploy to staging with make deploy-staging")
    code, _, err = _run(tmp_path, "--dir", "mem", "retire", "deploy_day.md", "--reason", "gone")
    assert code == 0, err
    code, out, err = _run(tmp_path, "--dir", "mem", "--json", "recall", "--explain", "deploys")
    assert code == 0, err
    paths = [row["path"] for row in json.loads(out)]
    assert "deploy_day.md" not in paths and "staging.md" in paths


def test_reindex_backfills_applies_when_by_rules_then_by_a_model(tmp_path: Path) -> None:
    _run(
        tmp_path,
        "--dir",
        "mem",
        "add",
        "Use pnpm",
        "-d",
        "Docs use pnpm",
        "-t",
        "feedback",
        "-b",
        "pnpm add",
    )
    path = tmp_path / "mem" / "use_pnpm.md"
    path.write_text(path.read_text().replace("applies_when", "old_field"))  # an old memory
    code, out, _ = _run(tmp_path, "--dir", "mem", "reindex")
    assert code == 0 and json.loads(out)["applies_when_written"] == 1
    assert "applies_when:" in path.read_text()
    code, _out, err = _run(tmp_path, "--dir", "mem", "reindex", "--applies-when", "model")
    assert code == 2 and "needs a model" in err
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"repeat": {"json": {"applies_when": ["adding a package"]}}}))
    out_io, err_io = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path / "h"), "MEMDIR_MODEL": f"scripted:{replies}"}
    argv = ["--dir", "mem", "reindex", "--applies-when", "model"]
    assert main(argv, env=env, cwd=tmp_path, stdout=out_io, stderr=err_io) == 0, err_io.getvalue()
    assert json.loads(out_io.getvalue())["applies_when_written"] == 1
    assert "- adding a package" in path.read_text()


def test_recall_surfaces_the_pnpm_memory_for_a_charting_library_and_says_why(
    tmp_path: Path,
) -> None:
    """Issue #20's "done when", through the CLI as a user runs it."""
    argv = ["--dir", "mem", "add", "Frontend package manager", "-t", "feedback"]
    argv += ["-d", "This repo uses pnpm; npm and yarn break the lockfile"]
    code, _out, err = _run(tmp_path, *argv, "-b", "Why: mixed lockfiles broke CI twice.")
    assert code == 0, err
    _add(tmp_path, "Lunch", "The team eats together at noon on Fridays")
    query = "install the charting library"
    code, out, err = _run(tmp_path, "--dir", "mem", "--json", "recall", query)
    assert code == 0, err
    assert [row["path"] for row in json.loads(out)] == ["frontend_package_manager.md"]
    code, out, err = _run(tmp_path, "--dir", "mem", "--json", "recall", "--explain", query)
    assert code == 0, err
    rows = {row["path"]: row for row in json.loads(out)}
    pnpm = rows["frontend_package_manager.md"]
    assert pnpm["selected"] and pnpm["rank"] == 1
    assert pnpm["why"].startswith("applies when 'adding, installing, upgrading")
    assert "words: instal, librari" in pnpm["why"] and "similarity" in pnpm["why"]
    assert not rows["lunch.md"]["selected"]


def test_recall_asks_the_warm_daemon_when_one_is_up_and_answers_the_same(tmp_path: Path) -> None:
    """A daemon the hooks (or ``memdir import``) started answers ``memdir recall`` with its
    loaded index; the answer is the one the command gives in its own process."""
    from memdir.adapters import recall_client
    from tests.adapters.test_recall_daemon import start

    _add(tmp_path, "Merge freeze", "No merges until the mobile release")
    _add(tmp_path, "Staging", "Deploy to staging with make deploy-staging")
    home = tmp_path / "h"

    def ask(**env: str) -> list[dict[str, object]]:
        out, err = io.StringIO(), io.StringIO()
        argv = ["--json", "--dir", "mem", "recall", "how do I deploy to staging?"]
        code = main(argv, env={"HOME": str(home), **env}, cwd=tmp_path, stdout=out, stderr=err)
        assert code == 0, err.getvalue()
        return list(json.loads(out.getvalue()))

    alone = ask()  # no daemon: recalled in this process
    assert alone and alone[0]["path"] == "staging.md"
    sock = recall_client.socket_path(home / ".memdir")
    proc = start(sock)
    try:
        before = recall_client.request(sock, {"op": "status"})["requests"]
        assert ask() == alone
        assert recall_client.request(sock, {"op": "status"})["requests"] == before + 2
        assert ask(MEMDIR_HOOK_DAEMON="0") == alone  # switched off: not asked
        assert recall_client.request(sock, {"op": "status"})["requests"] == before + 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()
    sock.parent.mkdir(parents=True, exist_ok=True)
    sock.touch()  # a socket file left by a daemon that died: the command recalls itself
    assert ask() == alone
