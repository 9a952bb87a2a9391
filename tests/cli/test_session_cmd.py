"""``memdir compact`` and ``memdir session show|update``, as a new user would run them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.session.convert import load_transcript
from memdir.session.messages import api_shape_problems
from memdir.session.tokens import Window
from tests.session.support import coding_session, long_session


def run(tmp_path: Path, *argv: str) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path / "home")}
    code = main(["--json", *argv], env=env, cwd=tmp_path, stdout=out, stderr=err)
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else None, err.getvalue()


def test_compact_a_long_session_from_a_real_process(tmp_path: Path) -> None:
    t = long_session(tmp_path / "s.jsonl")
    before = t.path.read_bytes()
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "compact", str(t.path), "--window", "40000"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)  # piped: JSON
    report = payload["report"]
    assert report["rung"] == "session_memory"
    assert report["tokens_before"] > Window(40_000).threshold > report["tokens_after"]
    assert api_shape_problems(payload["messages"]) == []
    assert "module_0.py" in payload["messages"][0]["content"][0]["text"]
    assert Path(report["notes_path"]).is_file()
    assert t.path.read_bytes() == before  # the transcript is not touched without --append


def test_append_records_the_compaction(tmp_path: Path) -> None:
    t = long_session(tmp_path / "s.jsonl", turns=40)
    code, payload, _ = run(tmp_path, "compact", str(t.path), "--window", "40000", "--append")
    assert code == 0
    resumed, issues = load_transcript(t.path)
    assert issues == []
    assert [m.kind for m in resumed[:2]] == ["compact_boundary", "compact_summary"]
    assert len(resumed) == 2 + payload["report"]["kept_messages"]


def test_compact_reports_bad_lines_and_still_works(tmp_path: Path) -> None:
    t = long_session(tmp_path / "s.jsonl", turns=40)
    with t.path.open("a") as fh:
        fh.write('{"type": "user", "message": {"role"')
    code, payload, err = run(tmp_path, "compact", str(t.path), "--window", "40000")
    assert "torn or corrupt line skipped" in err
    assert code == 0 and api_shape_problems(payload["messages"]) == []


def test_compact_that_summarises_nothing_exits_2(tmp_path: Path) -> None:
    t = coding_session(tmp_path / "s.jsonl")  # a short session: it already fits 200k tokens
    code, payload, err = run(tmp_path, "compact", str(t.path))
    report = payload["report"]
    assert report["summarized_messages"] == 0
    assert code == 2  # before the fix: 0, with an output larger than the input
    assert "nothing was summarised" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compact", "missing.jsonl"], "no transcript at"),
        (["compact", "empty.jsonl"], "holds no conversation"),
        (["compact", "s.jsonl", "--llm"], "--llm needs a model"),
        (["compact", "s.jsonl", "--window", "10"], "--window must be at least"),
        (["session", "show", "nobody.jsonl"], "no session notes at"),
    ],
)
def test_clear_errors(tmp_path: Path, argv: list[str], message: str) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    coding_session(tmp_path / "s.jsonl")
    code, _, err = run(tmp_path, *argv)
    assert code == 2 and message in err


def test_session_update_then_show(tmp_path: Path) -> None:
    t = coding_session(tmp_path / "s.jsonl")
    code, payload, _ = run(tmp_path, "session", "update", str(t.path))
    assert code == 0 and payload["changed"] is True
    code, shown, _ = run(tmp_path, "session", "show", str(t.path))
    assert code == 0 and shown["intact"] is True
    assert "# Session Title\n" in shown["notes"] and "Add a discount field" in shown["notes"]
    code, again, _ = run(tmp_path, "session", "show", shown["notes_path"])
    assert again["notes"] == shown["notes"]


def test_session_show_defaults_to_the_newest_session(tmp_path: Path) -> None:
    code, where, _ = run(tmp_path, "where")
    transcripts = Path(where["paths"]["transcripts_dir"])
    t = coding_session(transcripts / "7b0f2f7e-5a54-4c1e-9a38-0c1d2e3f4a5b.jsonl")
    assert run(tmp_path, "session", "update")[0] == 0
    code, shown, _ = run(tmp_path, "session", "show")
    assert code == 0 and shown["notes_path"].startswith(str(t.path.with_suffix("")))


def test_text_output_on_a_terminal(tmp_path: Path) -> None:
    t = long_session(tmp_path / "s.jsonl", turns=30)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["--text", "compact", str(t.path), "--window", "40000"],
        env={"HOME": str(tmp_path)},
        cwd=tmp_path,
        stdout=out,
        stderr=err,
    )
    assert code == 0
    text = out.getvalue()
    assert "session_memory" in text and "tokens" in text and "user:" in text


def test_a_user_template_is_used_and_a_broken_one_is_not(tmp_path: Path) -> None:
    from memdir.session.notes import builtin_template

    config = tmp_path / "home" / ".memdir" / "session-memory" / "config"
    config.mkdir(parents=True)
    custom = builtin_template().replace("_A short, specific title", "_My own title line")
    (config / "template.md").write_text(custom)
    t = coding_session(tmp_path / "s.jsonl")
    assert run(tmp_path, "session", "update", str(t.path))[0] == 0
    notes = run(tmp_path, "session", "show", str(t.path))[1]["notes"]
    assert "_My own title line" in notes
    (config / "template.md").write_text("# Just one section\n")
    t2 = coding_session(tmp_path / "s2.jsonl")
    code, _, err = run(tmp_path, "session", "update", str(t2.path))
    assert code == 0 and "not used" in err
    assert "_A short, specific title" in run(tmp_path, "session", "show", str(t2.path))[1]["notes"]


def test_session_show_finds_the_notes_a_hook_session_left(tmp_path: Path) -> None:
    """A host's session: its transcript lives in the host's dir, its notes in memdir's; the
    newest notes are shown, not those of an older session memdir ran itself."""
    code, where, _ = run(tmp_path, "where")
    transcripts = Path(where["paths"]["transcripts_dir"])
    own = coding_session(transcripts / "7b0f2f7e-5a54-4c1e-9a38-0c1d2e3f4a5b.jsonl")
    assert run(tmp_path, "session", "update", str(own.path))[0] == 0
    hosts = coding_session(tmp_path / "claude" / "e0c1d2e3-0000-4c1e-9a38-7b0f2f7e5a54.jsonl")
    notes = transcripts / "e0c1d2e3-0000-4c1e-9a38-7b0f2f7e5a54" / "session-memory" / "summary.md"
    code, _, _ = run(tmp_path, "session", "update", str(hosts.path))
    assert code == 0
    # what the hooks do: the notes of the host's session under memdir's session dir
    notes.parent.mkdir(parents=True)
    (hosts.path.with_suffix("") / "session-memory" / "summary.md").rename(notes)
    os.utime(notes.parent.parent.parent / own.path.stem / "session-memory" / "summary.md", (1, 1))
    code, shown, _ = run(tmp_path, "session", "show")
    assert code == 0 and shown["notes_path"] == str(notes)
