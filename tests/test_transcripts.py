"""Append-only JSONL transcripts: shapes, modes, torn lines, read cap, concurrency, listing."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import stat
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.errors import MemoryNotFoundError, UnreadableFileError
from memdir.transcripts import (
    Transcript,
    append_entries,
    conversation,
    is_session_id,
    list_sessions,
    read_transcript,
    timestamp,
    tool_use_block,
)
from tests.fifo import returns_promptly

SID = "0f8e6a52-1c1d-4a7e-9a43-3c0d2b6f9e11"


@pytest.fixture
def transcript(tmp_path: Path) -> Transcript:
    return Transcript(tmp_path / "proj" / f"{SID}.jsonl", SID, "/work/app", git_branch="main")


def test_roundtrip_shapes_and_parent_chain(transcript: Transcript) -> None:
    u = transcript.user("please remember I use uv")
    call = tool_use_block("Read", {"file_path": "/m/MEMORY.md"})
    a = transcript.assistant([call], model="claude-x", stop_reason="tool_use")
    r = transcript.tool_result(call["id"], "file contents", is_error=False)
    s = transcript.summary("User prefers uv")
    read = read_transcript(transcript.path)
    assert read.issues == [] and read.truncated is False
    assert read.entries == [u, a, r, s]
    assert u["parentUuid"] is None
    assert a["parentUuid"] == u["uuid"] and r["parentUuid"] == a["uuid"]
    assert s == {"type": "summary", "summary": "User prefers uv", "leafUuid": r["uuid"]}
    assert u["message"] == {"role": "user", "content": "please remember I use uv"}
    assert (u["sessionId"], u["cwd"], u["gitBranch"], u["isSidechain"]) == (
        SID,
        "/work/app",
        "main",
        False,
    )
    assert a["message"]["role"] == "assistant" and a["message"]["model"] == "claude-x"
    assert a["message"]["content"][0]["type"] == "tool_use"
    assert a["message"]["stop_reason"] == "tool_use"
    assert r["message"]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": call["id"],
        "content": "file contents",
    }
    assert [e["type"] for e in conversation(read.entries)] == ["user", "assistant", "user"]


def test_assistant_text_becomes_a_text_block(transcript: Transcript) -> None:
    a = transcript.assistant("hello", model="m", usage={"input_tokens": 3, "output_tokens": 1})
    assert a["message"]["content"] == [{"type": "text", "text": "hello"}]
    assert a["message"]["usage"] == {"input_tokens": 3, "output_tokens": 1}


def test_flags_boundary_and_sidechain(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s" / "subagents" / "agent-a1.jsonl", SID, "/w", agent_id="a1")
    first = t.user("x")
    meta = t.user("compact summary", is_meta=True, is_compact_summary=True, boundary=True)
    assert meta["parentUuid"] is None and first["parentUuid"] is None
    assert meta["isMeta"] is True and meta["isCompactSummary"] is True
    assert meta["isSidechain"] is True and meta["agentId"] == "a1"


def test_modes(transcript: Transcript) -> None:
    transcript.user("x")
    assert stat.S_IMODE(transcript.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(transcript.path.parent.stat().st_mode) == 0o700


def test_torn_last_line_is_skipped_and_next_append_starts_fresh(transcript: Transcript) -> None:
    transcript.user("one")
    with transcript.path.open("ab") as fh:
        fh.write(b'{"type":"user","message":{"role":"us')  # a writer died mid-line
    read = read_transcript(transcript.path)
    assert len(read.entries) == 1
    assert [i.line for i in read.issues] == [2]
    assert "torn or corrupt" in read.issues[0].reason
    transcript.user("two")
    read = read_transcript(transcript.path)
    assert [e["message"]["content"] for e in read.entries] == ["one", "two"]
    assert len(read.issues) == 1


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"not json at all", "torn or corrupt"),
        (b"[1, 2, 3]", "not a JSON object"),
        (b'"just a string"', "not a JSON object"),
        (b'{"type": "user", "x": "\xff\xfe"}', "torn or corrupt"),
    ],
)
def test_corrupt_lines_anywhere_are_reported(tmp_path: Path, bad: bytes, reason: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"type":"user","uuid":"a"}\n' + bad + b'\n\n{"type":"user","uuid":"b"}\n')
    read = read_transcript(path)
    assert [e["uuid"] for e in read.entries] == ["a", "b"]
    assert [(i.line, reason in i.reason) for i in read.issues] == [(2, True)]


def test_read_cap_keeps_the_newest_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    append_entries(path, [{"type": "user", "n": n, "pad": "x" * 80} for n in range(100)])
    newest_ten = sum(len(line) + 1 for line in path.read_bytes().split(b"\n")[90:100])
    read = read_transcript(path, max_bytes=newest_ten + 5)
    assert read.truncated is True
    assert read.issues == []  # the cut first line is dropped, not reported as corrupt
    assert [e["n"] for e in read.entries] == list(range(90, 100))


def test_missing_transcript(tmp_path: Path) -> None:
    with pytest.raises(MemoryNotFoundError):
        read_transcript(tmp_path / "nope.jsonl")


def test_resume_continues_the_chain(transcript: Transcript) -> None:
    transcript.user("a")
    last = transcript.assistant("b", model="m")
    again = Transcript.resume(transcript.path, session_id=SID, cwd="/work/app")
    assert again.last_uuid == last["uuid"]
    assert again.user("c")["parentUuid"] == last["uuid"]
    fresh = Transcript.resume(transcript.path.with_name("new.jsonl"), session_id=SID, cwd="/")
    assert fresh.last_uuid is None


def _writer(path: str, worker: int, count: int) -> None:
    t = Transcript(Path(path), SID, "/w")
    for n in range(count):
        t.user(f"w{worker}-{n}-" + "y" * 5000)  # larger than a pipe buffer: no interleaving


def test_concurrent_process_appends_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 25)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    read = read_transcript(path)
    assert read.issues == []
    assert len(read.entries) == 100
    tags = {e["message"]["content"].split("-y")[0] for e in read.entries}
    assert tags == {f"w{w}-{n}" for w in range(4) for n in range(25)}


def test_timestamp_format() -> None:
    import datetime as dt

    moment = dt.datetime(2026, 1, 2, 3, 4, 5, 678900, tzinfo=dt.UTC)
    assert timestamp(moment) == "2026-01-02T03:04:05.678Z"


@pytest.mark.parametrize(
    ("name", "ok"),
    [(SID, True), (SID.upper(), True), ("not-a-uuid", False), (SID + "x", False), ("", False)],
)
def test_is_session_id(name: str, ok: bool) -> None:
    assert is_session_id(name) is ok


def test_list_sessions(tmp_path: Path) -> None:
    ids = [str(uuid.uuid4()) for _ in range(4)]
    for n, sid in enumerate(ids):
        path = tmp_path / f"{sid}.jsonl"
        path.write_text("{}\n")
        os.utime(path, (1000.0 + n * 100, 1000.0 + n * 100))
    (tmp_path / "notes.jsonl").write_text("{}\n")  # not UUID-named
    (tmp_path / f"{uuid.uuid4()}.json").write_text("{}")  # wrong suffix
    (tmp_path / f"{uuid.uuid4()}.jsonl").mkdir()  # a directory, not a transcript
    (tmp_path / f"{ids[0]}.jsonl.lock").write_text("")
    all_sessions = list_sessions(tmp_path)
    assert [s.session_id for s in all_sessions] == list(reversed(ids))
    recent = list_sessions(tmp_path, since=1100.0, exclude=ids[3])
    assert [s.session_id for s in recent] == [ids[2]]  # mtime must be strictly newer
    assert recent[0].size == 3 and recent[0].mtime == 1200.0
    assert list_sessions(tmp_path / "missing", since=0) == []


def test_entries_are_compact_single_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    append_entries(path, [{"type": "user", "text": "multi\nline ünïcode"}])
    raw = path.read_text("utf-8")
    assert raw.count("\n") == 1 and "ünïcode" in raw
    assert json.loads(raw)["text"] == "multi\nline ünïcode"
    append_entries(path, [])
    assert path.read_text("utf-8") == raw


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text() | st.text(st.characters(categories=["Cs", "Ll"])), min_size=1))
def test_any_text_roundtrips(tmp_path: Path, texts: list[str]) -> None:
    # Includes lone surrogates (Cs), which cannot be encoded as UTF-8: written as escapes, read
    # back as U+FFFD (issue #22.2: left in, they broke every later UTF-8 encode).
    path = tmp_path / f"{uuid.uuid4()}.jsonl"
    t = Transcript(path, SID, "/w")
    written = [t.user(text) for text in texts]
    read = read_transcript(path)
    assert read.issues == []
    # JSON has no way to tell a surrogate *pair* from the character it encodes: pairs come back
    # joined, lone surrogates come back as U+FFFD.
    joined = [
        re.sub(
            "[\ud800-\udfff]",
            "\ufffd",
            t.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass"),
        )
        for t in texts
    ]
    assert [e["message"]["content"] for e in read.entries] == joined
    assert [e["uuid"] for e in read.entries] == [e["uuid"] for e in written]


def test_a_deeply_nested_line_is_skipped_and_reported_like_a_torn_one(tmp_path: Path) -> None:
    """Issue #21.2 / #22.1: one 200,000-deep line must not cost the rest of the transcript."""
    path = tmp_path / "t.jsonl"
    deep_array = b"[" * 200_000 + b"]" * 200_000
    deep_object = b'{"x":' * 100_000 + b"1" + b"}" * 100_000
    path.write_bytes(
        b'{"type":"user","uuid":"a"}\n'
        + deep_array
        + b"\n"
        + deep_object
        + b'\n{"type":"user","uuid":"b"}\n'
    )
    read = read_transcript(path)
    assert [e["uuid"] for e in read.entries] == ["a", "b"]
    assert [i.line for i in read.issues] == [2, 3]
    assert all("nested too deeply" in i.reason for i in read.issues)


def test_a_fifo_or_device_is_refused_without_blocking(tmp_path: Path) -> None:
    """Issue #22.3: a FIFO at the transcript path is refused at once, never waited on."""
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFileError, match="not a regular file"):
        returns_promptly(lambda: read_transcript(fifo), [fifo])
    with pytest.raises(UnreadableFileError, match="not a regular file"):
        read_transcript(Path("/dev/zero"))  # would otherwise read 50 MB of zeros


def test_a_lone_surrogate_escape_is_read_as_the_replacement_character(tmp_path: Path) -> None:
    """Issue #22.2: ``"\\ud800"`` is valid JSON but no valid text; every later encode would fail."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b'{"type":"user","uuid":"a","message":{"content":[{"text":"x\\ud800y \\ud83d\\ude00"}]},'
        b'"k\\udfff":1}\n'
    )
    (entry,) = read_transcript(path).entries
    assert entry["message"]["content"][0]["text"] == "x\ufffdy \U0001f600"  # a valid pair stays
    assert "k\ufffd" in entry
    json.dumps(entry, ensure_ascii=False).encode("utf-8")


def test_a_transcript_append_is_fsynced_and_a_best_effort_log_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.transcripts import append_entries

    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    path = tmp_path / "log.jsonl"
    append_entries(path, [{"n": 1}])
    assert len(synced) == 1
    append_entries(path, [{"n": 2}], durable=False)
    assert len(synced) == 1
    assert path.read_text().splitlines() == ['{"n":1}', '{"n":2}']
