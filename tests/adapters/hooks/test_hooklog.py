"""The hook log: whole lines, capped, and never a credential (regression: it kept the first 300
characters of each prompt, pasted tokens included, even with ``privateSecrets: refuse``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.adapters.hooks import hooklog

TOKEN = "ghp_R8kq2ZfLw0Tn5YbV3cXa9PdM1sHj7UeG4oQi"  # shaped like a GitHub PAT, not a real one
AWS = "AKIAZ7VRSQ5TEXAMPLE3"  # shaped like an AWS access key id


def logged(cache: Path) -> dict[str, object]:
    (row,) = hooklog.read(cache)
    return row


def test_a_pasted_token_in_a_prompt_is_redacted(tmp_path: Path) -> None:
    prompt = f"deploy with my token {TOKEN} please, then tell me how it went"
    hooklog.record(tmp_path, {"event": "user-prompt-submit", "prompt": prompt})
    row = logged(tmp_path)
    assert TOKEN not in str(row) and "[REDACTED]" in str(row["prompt"])
    assert str(row["prompt"]).startswith("deploy with my token ")
    assert TOKEN not in hooklog.log_path(tmp_path).read_text()


@pytest.mark.parametrize("at", [0, 280, hooklog.PROMPT_LOG_CHARS - 4])
def test_a_token_straddling_the_cut_leaves_no_half_behind(tmp_path: Path, at: int) -> None:
    prompt = "x" * at + " " + TOKEN + " and more words after it" * 20
    hooklog.record(tmp_path, {"event": "user-prompt-submit", "prompt": prompt})
    kept = str(logged(tmp_path)["prompt"])
    assert len(kept) <= hooklog.PROMPT_LOG_CHARS
    assert TOKEN[:8] not in kept  # redacted before the cut, not cut then scanned


def test_injected_text_is_redacted_and_other_fields_kept(tmp_path: Path) -> None:
    entry = {"event": "session-start", "text": f"key {AWS} here", "chars": 17, "prompt": None}
    hooklog.record(tmp_path, entry)
    row = logged(tmp_path)
    assert AWS not in str(row["text"]) and row["chars"] == 17 and row["prompt"] is None


def test_a_long_prompt_is_kept_to_its_start(tmp_path: Path) -> None:
    hooklog.record(tmp_path, {"event": "user-prompt-submit", "prompt": "word " * 5000})
    assert len(str(logged(tmp_path)["prompt"])) == hooklog.PROMPT_LOG_CHARS


def test_a_daemon_row_the_hook_replaced_is_left_out_and_others_stay(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    hooklog.record(cache, {"session": "s", "event": "user-prompt-submit", "request": "r1"})
    hooklog.record(cache, {"session": "s", "event": "user-prompt-submit", "request": "r2"})
    hooklog.record(cache, {"session": "s", "event": "user-prompt-submit", "replaces": "r1"})
    rows = hooklog.read(cache, limit=0)
    assert [(r.get("request"), r.get("replaces")) for r in rows] == [("r2", None), (None, "r1")]
    assert hooklog.read(cache, limit=1)[0].get("replaces") == "r1"
