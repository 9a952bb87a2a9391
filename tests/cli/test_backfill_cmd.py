"""``memdir backfill`` end to end: the hosts' real transcript shapes in a fake home, the plan,
the cost gate, resuming, and hostile transcripts (each a one-line report, never a traceback)."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.llm.ledger import CostLedger, ledger_path
from tests.backfill.sessions import (
    DAY0,
    claude_dir,
    claude_session,
    codex_rollout,
    gemini_session,
)
from tests.fifo import returns_promptly
from tests.team.samples import SPECS

LESSON = "Always run the tests with `make check`, never plain pytest."


class Cli:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "proj"
        self.project.mkdir(parents=True)
        self.memory = tmp_path / "memory"

    def env(self, **extra: str) -> dict[str, str]:
        return {"HOME": str(self.home), "PATH": "/nonexistent", **extra}

    def __call__(self, *argv: str, **env: str) -> tuple[int, Any, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["--json", "--dir", str(self.memory), "backfill", *argv],
            env=self.env(**env),
            cwd=self.project,
            stdout=out,
            stderr=err,
        )
        text = out.getvalue()
        return code, json.loads(text) if text.strip() else None, err.getvalue()

    def memories(self) -> dict[str, str]:
        if not self.memory.is_dir():
            return {}
        return {
            p.name: p.read_text(encoding="utf-8")
            for p in self.memory.glob("*.md")
            if p.name != "MEMORY.md"
        }

    def cursor(self) -> Path:
        found = list((self.home / ".memdir" / "cache").glob("*/backfill/cursor.json"))
        assert len(found) <= 1
        return found[0] if found else self.home / "no-cursor"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_learns_from_all_three_hosts_oldest_first_and_a_rerun_does_nothing(cli: Cli) -> None:
    said = [("user", LESSON), ("user", "Remember that CI uses the ubuntu-24.04 image.")]
    first = claude_session(cli.home, cli.project, said, when=DAY0)
    # the recorded fixtures' own days: a sighting is dated by the session's messages
    codex = codex_rollout(cli.home, cli.project, when=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    gemini = gemini_session(cli.home, cli.project, when=dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    code, out, err = cli()
    assert code == 0, err
    assert out["mode"] == "offline" and out["learnt"] == 3 and out["remaining"] == 0
    assert [p["path"] for p in out["planned"]] == [str(codex), str(first), str(gemini)]
    assert "no model" in err  # said once, on stderr: why this ran offline
    lines = [ln for ln in err.splitlines() if "backfill " in ln]
    assert len(lines) == 3 and lines[0].startswith("memdir: backfill 1/3 codex rollout-")
    memories = cli.memories()
    # Claude Code and Codex sessions said the same thing: one memory, seen on both days; Gemini
    # CLI's wording differs enough for the lexical sameness to keep it apart
    assert sorted(memories) == [
        "feedback_always_run_the_tests_with_make_check.md",
        "project_ci_jobs_run_on_the_ubuntu_24_04_image.md",
        "project_ci_uses_the_ubuntu_24_04_image.md",
    ]
    seen = memories["project_ci_uses_the_ubuntu_24_04_image.md"]
    assert "- 2026-01-01:" in seen and "- 2026-03-02:" in seen
    code, again, _ = cli()
    assert code == 0 and again["processed"] == 0 and again["done_before"] == 3
    assert cli.memories() == memories


def test_host_since_and_limit_choose_what_is_read(cli: Cli) -> None:
    for n in range(4):
        claude_session(cli.home, cli.project, [("user", "ok")], when=DAY0 + dt.timedelta(days=n))
    codex_rollout(cli.home, cli.project)
    code, out, _ = cli("--host", "codex", "--dry-run")
    assert code == 0 and [p["path"].split("/")[-1][:8] for p in out["planned"]] == ["rollout-"]
    since = (DAY0 + dt.timedelta(days=2)).astimezone().date().isoformat()
    code, out, _ = cli("--host", "claude-code", "--since", since, "--limit", "1")
    assert code == 0 and out["processed"] == 1 and out["found"] == 4
    code, out, _ = cli("--host", "claude-code", "--since", since)
    assert out["processed"] == 1 and out["done_before"] == 1  # the rest since that day
    assert cli("--since", "yesterday")[0] == 2


def test_dry_run_prints_the_plan_and_the_cost_and_changes_nothing(cli: Cli, tmp_path: Path) -> None:
    path = claude_session(cli.home, cli.project, [("user", LESSON)])
    code, out, _ = cli("--dry-run", "--model", "claude-code:haiku")
    assert code == 0 and out["mode"] == "model" and out["model"] == "claude-code:haiku"
    assert out["planned"] == [
        {"host": "claude-code", "path": str(path), "size": path.stat().st_size, "state": "new"}
    ]
    tokens = 2 * (path.stat().st_size // 4 + 3000)
    assert out["estimate"]["input_tokens"] == tokens and out["estimate"]["usd"] > 0
    assert cli.memories() == {} and not cli.cursor().exists()


def test_a_model_run_asks_first_then_runs_on_the_scripted_model(cli: Cli, tmp_path: Path) -> None:
    claude_session(cli.home, cli.project, [("user", "We deploy from the release branch.")])
    target = cli.memory / "project_deploys.md"
    script = tmp_path / "replies.json"
    content = (
        "---\nname: Deploys come from the release branch\ndescription: where deploys are cut "
        "from\ntype: project\n---\nDeploys come from `release`.\n"
    )
    script.write_text(
        json.dumps(
            [
                {"tool": "Write", "input": {"file_path": str(target), "content": content}},
                {"text": "Saved."},
            ]
        )
    )
    code, out, err = cli(MEMDIR_MODEL=f"scripted:{script}")
    assert code == 2 and "pass --yes" in err and "1 transcripts with scripted:" in err
    assert out is None and cli.memories() == {}
    code, out, err = cli("--yes", MEMDIR_MODEL=f"scripted:{script}")
    assert code == 0, err
    assert out["mode"] == "model" and out["learnt"] == 1
    assert out["written"] == ["project_deploys.md"] and target.exists()


def test_a_spent_budget_stops_a_host_model_run_before_it_starts(cli: Cli) -> None:
    claude_session(cli.home, cli.project, [("user", LESSON)])
    bindir = cli.home / "bin"
    bindir.mkdir(parents=True)
    claude = bindir / "claude"
    claude.write_text("#!/bin/sh\nexit 1\n")  # never run: the budget is checked first
    claude.chmod(0o755)
    ledger = CostLedger(ledger_path(cli.home / ".memdir"), budget_usd=None)
    ledger.record({"cost_usd": 5.0, "session": "earlier"})
    code, out, err = cli("--yes", PATH=str(bindir))
    assert code == 0, err
    assert out["model"] == "claude-code:haiku" and out["processed"] == 0
    assert "budget" in out["stopped"] and out["remaining"] == 1
    assert cli.memories() == {}


def test_a_second_backfill_at_the_same_time_is_refused(cli: Cli) -> None:
    claude_session(cli.home, cli.project, [("user", LESSON)])
    assert cli()[0] == 0
    claude_session(cli.home, cli.project, [("user", "ok")], when=DAY0 + dt.timedelta(days=1))
    lock = cli.cursor().with_name("backfill.lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, _, err = cli()
    finally:
        holder.kill()
        holder.communicate()
    assert code == 2 and err.strip() == (
        "memdir: error: another memdir backfill is running for this memory dir"
    )
    assert cli()[1]["processed"] == 1  # once it is free


HOLD = (
    "import sys, time; from pathlib import Path; from memdir.atomic import locked\n"
    "with locked(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)"
)


# -- hostile transcripts ------------------------------------------------------------------------


def test_a_fifo_and_a_symlink_out_are_reported_and_the_rest_is_learnt(
    cli: Cli, tmp_path: Path
) -> None:
    good = claude_session(cli.home, cli.project, [("user", LESSON)])
    fifo = good.with_name("00000000-0000-4000-8000-00000000000f.jsonl")
    os.mkfifo(fifo)
    outside = tmp_path / "private.jsonl"
    outside.write_bytes(good.read_bytes())
    link = good.with_name("00000000-0000-4000-8000-000000000001.jsonl")
    link.symlink_to(outside)
    code, out, err = returns_promptly(cli, [fifo])
    assert code == 0, err
    reasons = {Path(s["path"]).name: s["reason"] for s in out["skipped"]}
    assert "not a regular file" in reasons[fifo.name]
    assert "symlink that leaves" in reasons[link.name]
    assert out["learnt"] == 1 and "Traceback" not in err
    code, again, _ = returns_promptly(cli, [fifo])
    assert again["processed"] == 0  # the skips are remembered until the files change


@pytest.mark.parametrize("mib", [49, 51], ids=["under the read cap", "over it"])
def test_a_50_mb_line_and_bytes_that_are_not_utf8_cost_seconds_and_the_rest_is_learnt(
    cli: Cli, mib: int
) -> None:
    path = claude_session(cli.home, cli.project, [("user", "ok"), ("user", LESSON)])
    first, last = path.read_bytes().splitlines()
    huge = json.loads(first)
    huge["uuid"] = "00000000-0000-4000-8000-0000000000bb"
    huge["message"]["content"] = "Remember that " + "word " * (mib * 1024 * 1024 // 5)
    path.write_bytes(
        first + b"\n" + b'{"type": "user", "message": "\xff\xfe not utf-8"}\n'
        + json.dumps(huge).encode() + b"\n" + last + b"\n"
    )  # fmt: skip
    started = time.monotonic()
    code, out, err = cli()
    assert code == 0, err
    assert out["learnt"] == 1 and time.monotonic() - started < 120
    memories = cli.memories()  # the lesson after the wall of text; no memory of the wall
    assert list(memories) == ["feedback_always_run_the_tests_with_make_check.md"]


def test_a_credential_in_a_transcript_is_refused_and_never_printed(cli: Cli) -> None:
    token = SPECS["aws-access-token"].token(random.Random(8))
    said = f"Remember that the deploy key for staging is {token}."
    claude_session(cli.home, cli.project, [("user", said), ("user", LESSON)])
    code, out, err = cli(MEMDIR_PRIVATE_SECRETS="refuse")
    assert code == 0, err
    assert out["learnt"] == 1 and len(cli.memories()) == 1
    assert token not in json.dumps(out) + err
    assert all(token not in text for text in cli.memories().values())
    assert "credential" in err.lower() or "secret" in err.lower()


def test_claude_code_dir_names_are_the_hosts(cli: Cli) -> None:
    path = claude_session(cli.home, cli.project, [("user", "hi")])
    assert path.parent == claude_dir(cli.home, cli.project)


def test_what_memdirs_hooks_already_extracted_is_not_learnt_again(cli: Cli) -> None:
    from memdir.adapters.hooks.state import SessionStore
    from memdir.paths import sanitize_path

    said = [("user", "Remember that the old API lives at https://old.example.com/api."),
            ("assistant", "ok"), ("user", LESSON)]  # fmt: skip
    path = claude_session(cli.home, cli.project, said)
    first_reply = json.loads(path.read_text().splitlines()[1])["uuid"]
    cache = cli.home / ".memdir" / "cache" / sanitize_path(str(cli.memory))
    with SessionStore(cache).update(path.stem) as state:
        state.cursor = first_reply  # the hooks extracted the first turn while it happened
    code, out, err = cli()
    assert code == 0, err
    assert out["learnt"] == 1 and list(cli.memories()) == [
        "feedback_always_run_the_tests_with_make_check.md"
    ]


def test_on_real_claude_code_sessions_backfill_saves_what_extract_saves_per_transcript(
    cli: Cli, tmp_path: Path
) -> None:
    """Six real public Claude Code sessions (benchmarks/data/real_sessions): backfill leaves the
    memories `memdir extract` leaves when run over each transcript in the same order (their
    sightings differ only in date: backfill dates them by the session)."""
    from memdir.frontmatter import parse_memory
    from memdir.model import Memory

    def headers(found: dict[str, Memory]) -> dict[str, tuple[str, str, str | None]]:
        return {k: (m.name, m.description, m.type) for k, m in found.items()}

    real = sorted(
        (Path(__file__).parents[2] / "benchmarks" / "data" / "real_sessions").glob("*.jsonl")
    )
    assert len(real) >= 3
    directory = claude_dir(cli.home, cli.project)
    directory.mkdir(parents=True)
    copies = []
    for n, source in enumerate(real):
        copy = directory / f"00000000-0000-4000-8000-{n:012d}.jsonl"
        copy.write_bytes(source.read_bytes())
        os.utime(copy, (DAY0.timestamp() + n, DAY0.timestamp() + n))
        copies.append(copy)
    code, out, err = cli()
    assert code == 0, err
    assert out["learnt"] == len(real) and out["skipped"] == [] and out["failed"] == []
    by_backfill = {name: parse_memory(text, name) for name, text in cli.memories().items()}
    assert by_backfill, "the real sessions hold lessons the rules find"
    other = tmp_path / "by-extract"
    for copy in copies:
        code = main(
            ["--json", "--dir", str(other), "extract", str(copy)],
            env=cli.env(), cwd=cli.project, stdout=io.StringIO(), stderr=io.StringIO(),
        )  # fmt: skip
        assert code == 0
    by_extract = {
        p.name: parse_memory(p.read_text(encoding="utf-8"), p.name)
        for p in other.glob("*.md")
        if p.name != "MEMORY.md"
    }
    assert headers(by_backfill) == headers(by_extract)


def test_ten_sessions_with_one_lesson_through_the_command_end_as_one_memory(cli: Cli) -> None:
    for n in range(10):
        said = [("user", f"Please look at ticket {n}."), ("assistant", "ok"), ("user", LESSON)]
        claude_session(cli.home, cli.project, said, when=DAY0 + dt.timedelta(days=n))
    code, out, err = cli()
    assert code == 0, err
    assert out["learnt"] == 10
    ((name, text),) = cli.memories().items()
    assert out["written"] == [name]
    assert "- 2026-03-11:" in text and "- 2026-03-07:" in text and "- 2026-03-06:" not in text


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"


def _placed(host: str, path: Path, text: str, project: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(f"/tmp/{host}-fixture/project", str(project)))
    return path


def test_learns_from_the_recorded_sessions_of_qwen_copilot_pi_and_cline(cli: Cli) -> None:
    """Sessions the real CLIs wrote (tests/realhost/record_*_fixtures.py), each where its
    host keeps them, under this project: all four are read and learnt from, offline."""
    from memdir.paths import sanitize_path

    home = cli.home
    recorded = {
        h: (FIXTURES / h / "transcript.jsonl").read_text() for h in ("qwen", "copilot", "pi")
    }
    qwen = _placed(
        "qwen",
        home / ".qwen" / "projects" / sanitize_path(str(cli.project)) / "chats" / "s1.jsonl",
        recorded["qwen"],
        cli.project,
    )
    copilot = _placed(
        "copilot",
        home
        / ".copilot"
        / "session-state"
        / "8e0c4f0e-0000-4000-8000-000000000001"
        / "events.jsonl",
        recorded["copilot"],
        cli.project,
    )
    slug = "--" + str(cli.project).strip("/").replace("/", "-") + "--"
    pi = _placed(
        "pi",
        home / ".pi" / "agent" / "sessions" / slug / "2026-12-07T21-25-40_01a25265.jsonl",
        recorded["pi"],
        cli.project,
    )
    cline_dir = home / ".cline" / "data" / "sessions" / "1796688905038_g67ai"
    for name in ("1796688905038_g67ai.json", "1796688905038_g67ai.messages.json"):
        text = (FIXTURES / "cline" / "session" / name).read_text()
        _placed(
            "cline",
            cline_dir / name,
            text.replace("/tmp/cline-fixture/project", str(cli.project)),
            cli.project,
        )
    # another project's Cline session is not this project's
    other = home / ".cline" / "data" / "sessions" / "1796688905039_other"
    other.mkdir(parents=True)
    meta = json.loads((cline_dir / "1796688905038_g67ai.json").read_text())
    (other / "1796688905039_other.json").write_text(
        json.dumps({**meta, "cwd": "/elsewhere", "workspace_root": "/elsewhere"})
    )
    (other / "1796688905039_other.messages.json").write_text(
        (cline_dir / "1796688905038_g67ai.messages.json").read_text()
    )

    code, out, err = cli("--offline")
    assert code == 0, err
    planned = {p["host"]: p["path"] for p in out["planned"]}
    assert planned == {
        "qwen": str(qwen),
        "copilot": str(copilot),
        "pi": str(pi),
        "cline": str(cline_dir / "1796688905038_g67ai.messages.json"),
    }
    assert out["learnt"] == 4 and out["remaining"] == 0, out
    # the offline rules take Cline's "remember we use pnpm"; the others' mid-sentence
    # "then remember that ..." is a model's to find (their readers are tested one by one)
    assert "pnpm" in "\n".join(cli.memories().values())


def test_every_host_that_lists_a_projects_sessions_is_backfilled() -> None:
    from memdir.adapters.hosts import DIALECTS, dialect
    from memdir.cli.backfill_parts import HOSTS

    listing = {h for h in DIALECTS if callable(getattr(dialect(h), "project_transcripts", None))}
    assert set(HOSTS) == listing
