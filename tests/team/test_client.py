"""The sync client against a real server; hostile or flaky servers via httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
import os
import random
import string
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.errors import SyncAuthError, SyncConflictError, SyncError, SyncRejectedError
from memdir.team import secrets, wire
from memdir.team.client import TeamSyncClient, backoff_delay
from memdir.team.client_state import SyncState, read_local, state_path
from memdir.team.keys import display_key
from tests.team.conftest import Remote

# Assembled at run time so no credential-shaped string sits in the repository.
GITHUB_PAT = "gh" + "p_" + "".join(random.Random(7).choices(string.ascii_letters, k=36))
GITHUB_PAT_LABEL = secrets.scan(GITHUB_PAT)[0].label


def make_client(remote: Remote, root: Path, name: str = "a", **kwargs: object) -> TeamSyncClient:
    team = root / name / "team"
    team.mkdir(parents=True, exist_ok=True)
    return TeamSyncClient(
        url=remote.url,
        token=str(kwargs.pop("token", remote.token)),
        repo=remote.repo,
        team_dir=team,
        state_path=state_path(root / name / "cache", remote.url, remote.repo, team),
        **kwargs,  # type: ignore[arg-type]
    )


def write_files(team: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (team / rel).parent.mkdir(parents=True, exist_ok=True)
        (team / rel).write_text(text, encoding="utf-8")


def tree(team: Path) -> dict[str, str]:
    return {
        p.relative_to(team).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(team.rglob("*"))
        if p.is_file()
    }


async def test_push_then_pull_round_trips_and_second_pull_is_304(
    remote: Remote, tmp_path: Path
) -> None:
    files = {"MEMORY.md": "- [a](a.md) — a\n", "a.md": "alpha ✓", "deep/er/b.md": "beta"}
    async with (
        make_client(remote, tmp_path, "a") as alice,
        make_client(remote, tmp_path, "b") as bob,
    ):
        write_files(alice.team_dir, files)
        pushed = await alice.push()
        assert pushed.uploaded == sorted(files) and pushed.batches == 1
        assert (await alice.pull()).status == "not_modified"  # nobody else wrote: no download
        pulled = await bob.pull()
        assert pulled.status == "updated" and sorted(pulled.written) == sorted(files)
        assert tree(bob.team_dir) == files
        received = bob.stats.bytes_received
        assert (await bob.pull()).status == "not_modified"
        assert bob.stats.bytes_received == received  # a 304 carries no body


async def test_pull_after_push_still_fetches_what_others_wrote(
    remote: Remote, tmp_path: Path
) -> None:
    """Regression: a push must not make the next pull a 304 when we never saw others' entries."""
    async with (
        make_client(remote, tmp_path, "a") as alice,
        make_client(remote, tmp_path, "b") as bob,
    ):
        write_files(alice.team_dir, {"a.md": "A"})
        await alice.push()
        write_files(bob.team_dir, {"b.md": "B"})
        await bob.push()
        assert (await bob.pull()).written == ["a.md"]
        assert (await alice.pull()).written == ["b.md"]
        write_files(alice.team_dir, {"c.md": "C"})
        await alice.push()  # alice was fully up to date, so she still is
        assert (await alice.pull()).status == "not_modified"
        assert (await bob.pull()).written == ["c.md"]


async def test_pull_leaves_identical_files_alone(remote: Remote, tmp_path: Path) -> None:
    async with (
        make_client(remote, tmp_path, "a") as alice,
        make_client(remote, tmp_path, "b") as bob,
    ):
        write_files(alice.team_dir, {"same.md": "same", "new.md": "new"})
        await alice.push()
        write_files(bob.team_dir, {"same.md": "same"})
        old = bob.team_dir / "same.md"
        os.utime(old, (1_000_000, 1_000_000))
        pulled = await bob.pull()
        assert pulled.written == ["new.md"] and pulled.unchanged == 1
        assert old.stat().st_mtime == 1_000_000


async def test_push_sends_only_the_delta(remote: Remote, tmp_path: Path) -> None:
    async with make_client(remote, tmp_path) as client:
        write_files(client.team_dir, {f"m{i}.md": f"text {i}" for i in range(10)})
        await client.push()
        write_files(client.team_dir, {"m3.md": "changed"})
        second = await client.push()
        assert second.uploaded == ["m3.md"]
        assert (await client.push()).uploaded == []
    state = remote.state()
    assert state is not None and state.version == 2 and state.entries is not None
    assert state.entries["m3.md"] == "changed"


async def test_state_survives_restart_and_lives_in_the_cache_dir(
    remote: Remote, tmp_path: Path
) -> None:
    async with make_client(remote, tmp_path) as client:
        write_files(client.team_dir, {"a.md": "1"})
        await client.push()
        state_file = client.state_path
    assert state_file.is_file() and not state_file.is_relative_to(client.team_dir)
    async with make_client(remote, tmp_path) as again:
        assert again.state.server_checksums == {"a.md": wire.checksum("1")}
        assert (await again.push()).uploaded == []


async def test_secret_bearing_file_is_skipped_and_never_sent(
    remote: Remote, tmp_path: Path
) -> None:
    async with make_client(remote, tmp_path) as client:
        write_files(client.team_dir, {"ok.md": "fine", "leak.md": f"token = {GITHUB_PAT}\n"})
        result = await client.push()
    assert result.uploaded == ["ok.md"]
    assert [s.key for s in result.skipped] == ["leak.md"]
    assert GITHUB_PAT_LABEL in result.skipped[0].reason
    assert GITHUB_PAT not in result.skipped[0].reason
    state = remote.state()
    assert state is not None and state.entries == {"ok.md": "fine"}


async def test_conflict_refetches_hashes_and_retries(remote: Remote, tmp_path: Path) -> None:
    async with (
        make_client(remote, tmp_path, "a") as alice,
        make_client(remote, tmp_path, "b") as bob,
    ):
        write_files(alice.team_dir, {"shared.md": "v1"})
        await alice.push()
        await bob.pull()
        write_files(alice.team_dir, {"alice.md": "from alice"})
        await alice.push()  # bob's last checksum is now stale
        write_files(bob.team_dir, {"bob.md": "from bob"})
        result = await bob.push()
    assert result.conflicts == 1 and result.uploaded == ["bob.md"]
    state = remote.state()
    assert state is not None and state.version == 3
    assert state.entries == {"shared.md": "v1", "alice.md": "from alice", "bob.md": "from bob"}


async def test_too_many_entries_is_learned_then_push_truncates(
    remote: Remote, tmp_path: Path
) -> None:
    async with make_client(remote, tmp_path) as client:
        write_files(client.team_dir, {f"m{i:03}.md": f"{i}" for i in range(120)})
        with pytest.raises(SyncRejectedError) as info:
            await client.push()
        assert info.value.code == wire.TOO_MANY_ENTRIES and info.value.status == 413
        assert client.state.server_max_entries == 100
        assert remote.state() is None  # nothing half-written
        result = await client.push()
    assert result.truncated == 20 and len(result.uploaded) == 100
    state = remote.state()
    assert state is not None and sorted(state.entry_checksums) == [
        f"m{i:03}.md" for i in range(100)
    ]


async def test_large_push_is_split_into_batches_under_the_limit(
    remote: Remote, tmp_path: Path
) -> None:
    sizes: list[int] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "PUT":
            sizes.append(len(request.content))

    http = httpx.AsyncClient(event_hooks={"request": [record]})
    async with make_client(remote, tmp_path, http=http) as client:
        write_files(client.team_dir, {f"big{i}.md": chr(65 + i) * 70_000 for i in range(6)})
        result = await client.push()
    await http.aclose()
    assert result.batches == len(sizes) == 3
    assert all(size <= wire.MAX_BODY_BYTES for size in sizes)
    state = remote.state()
    assert state is not None and len(state.entry_checksums) == 6


async def test_deletions_do_not_propagate(remote: Remote, tmp_path: Path) -> None:
    async with make_client(remote, tmp_path) as client:
        write_files(client.team_dir, {"keep.md": "k", "gone.md": "g"})
        await client.push()
        (client.team_dir / "gone.md").unlink()
        assert (await client.push()).uploaded == []
    state = remote.state()
    assert state is not None and set(state.entry_checksums) == {"keep.md", "gone.md"}


async def test_bad_token_is_an_auth_error(remote: Remote, tmp_path: Path) -> None:
    async with make_client(remote, tmp_path, token="mdt_wrong") as client:
        write_files(client.team_dir, {"a.md": "x"})
        with pytest.raises(SyncAuthError):
            await client.pull()
        with pytest.raises(SyncAuthError):
            await client.push()


def hostile(entries: dict[str, str]) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {
            "organizationId": "evil",
            "repo": "acme/widgets",
            "version": 1,
            "lastModified": None,
            "checksum": "sha256:feed",
            "content": {"entries": entries},
        }
        return httpx.Response(200, json=body)

    return handler


def mock_client(
    tmp_path: Path, handler: Callable[[httpx.Request], httpx.Response], **kwargs: object
) -> TeamSyncClient:
    team = tmp_path / "mem" / "team"
    team.mkdir(parents=True)
    return TeamSyncClient(
        url="http://sync.invalid",
        token="t",
        repo="acme/widgets",
        team_dir=team,
        state_path=tmp_path / "cache" / "state.json",
        http=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    "key",
    ["../escape.md", "../../etc/passwd", "/abs.md", "a/../../x.md", "%2e%2e/x.md", "a\\..\\x.md"],
)
async def test_traversal_keys_from_a_malicious_server_are_refused(tmp_path: Path, key: str) -> None:
    client = mock_client(tmp_path, hostile({key: "pwned", "fine.md": "ok"}))
    result = await client.pull()
    assert [s.key for s in result.skipped] == [key]
    assert result.written == ["fine.md"]
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".md")
    assert written == [client.team_dir / "fine.md"]


def raw_json(entries: dict[str, str]) -> Callable[[httpx.Request], httpx.Response]:
    """Like :func:`hostile`, but ASCII-escaped JSON, so lone surrogates travel as ``\\ud800``."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = {"checksum": "sha256:feed", "version": 3, "content": {"entries": entries}}
        return httpx.Response(
            200, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )

    return handler


HOSTILE_ENTRIES = {
    "lone\ud800surrogate.md": "key with a lone surrogate",
    "k" * 4096 + ".md": "a 4 KB key",
    "ab/" * 1400 + "x.md": "a 4 KB key of short segments",
    "value.md": "a value with a lone surrogate \udc80",
}


async def test_hostile_keys_and_values_are_skipped_and_the_pull_completes(tmp_path: Path) -> None:
    """Regression (#8 item 6): one bad key used to abort the pull, leaving no sync state."""
    entries = {"a.md": "first", **HOSTILE_ENTRIES, "z.md": "last"}
    client = mock_client(tmp_path, raw_json(entries))
    result = await client.pull()
    assert result.written == ["a.md", "z.md"]
    assert sorted(s.key for s in result.skipped) == sorted(HOSTILE_ENTRIES)
    assert tree(client.team_dir) == {"a.md": "first", "z.md": "last"}
    state = SyncState.load(client.state_path)
    assert state.pulled_checksum == "sha256:feed" and state.pulled_version == 3
    assert "a.md" in state.server_checksums
    # Every report line can be printed and stays short.
    for skipped in result.skipped:
        shown = display_key(skipped.key)
        shown.encode("utf-8")
        assert len(shown) <= 121 and skipped.reason


async def test_oversized_entry_from_the_server_is_skipped(tmp_path: Path) -> None:
    client = mock_client(tmp_path, hostile({"huge.md": "x" * (wire.MAX_ENTRY_BYTES + 1)}))
    result = await client.pull()
    assert [s.key for s in result.skipped] == ["huge.md"] and result.written == []


@pytest.mark.parametrize(
    "body", [[], {"checksum": "x"}, {"checksum": "x", "content": {"entries": {"a": 1}}}]
)
async def test_malformed_documents_are_sync_errors(tmp_path: Path, body: object) -> None:
    client = mock_client(tmp_path, lambda request: httpx.Response(200, json=body))
    with pytest.raises(SyncError):
        await client.pull()


@pytest.mark.parametrize(
    ("failures", "ok"),
    [([503], True), ([503, 502], True), (["connect", 429], True), ([503, 503, 500], False)],
)
async def test_transient_failures_are_retried_with_backoff(
    tmp_path: Path, failures: list[int | str], ok: bool
) -> None:
    remaining = list(failures)
    slept: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if remaining:
            failure = remaining.pop(0)
            if failure == "connect":
                raise httpx.ConnectError("refused", request=request)
            return httpx.Response(int(failure))
        return httpx.Response(404)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    client = mock_client(tmp_path, handler, sleep=sleep, rand=lambda: 1.0)
    if ok:
        assert (await client.pull()).status == "empty"
    else:
        with pytest.raises(SyncError):
            await client.pull()
    expected = [0.625, 1.25][: min(len(failures), 2)]
    assert slept == expected


@pytest.mark.parametrize(
    ("attempt", "low", "high"), [(1, 0.5, 0.625), (2, 1.0, 1.25), (7, 32.0, 40.0), (12, 32.0, 40.0)]
)
def test_backoff_delay_bounds(attempt: int, low: float, high: float) -> None:
    assert backoff_delay(attempt, lambda: 0.0) == low
    assert backoff_delay(attempt, lambda: 1.0) == high


def test_read_local_skips_what_must_not_leave(tmp_path: Path) -> None:
    team = tmp_path / "team"
    write_files(team, {"ok.md": "fine", ".hidden.md.abc.tmp": "temp", "sub/x.md": "x"})
    (team / "big.md").write_text("x" * (wire.MAX_ENTRY_BYTES + 1))
    (team / "bin.md").write_bytes(b"\xff\xfe")
    (team / "link.md").symlink_to(team / "ok.md")
    (team / "nul.md").write_text("a\x00b")  # the server refuses it: it must not sink a batch
    local = read_local(team)
    assert sorted(local.entries) == ["ok.md", "sub/x.md"]
    assert [s.key for s in local.skipped] == ["big.md", "bin.md", "link.md", "nul.md"]


def test_corrupt_state_file_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    for content in ("not json", "[]", json.dumps({"serverChecksums": 3, "lastChecksum": 4})):
        path.write_text(content)
        assert SyncState.load(path) == SyncState()


_SEGMENTS = ["..", ".", "a", "b.md", "%2e%2e", "%2f", "．．", "\\..", "", "~", "\x00", "ｂ", "/"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=6))
def test_no_key_from_a_server_writes_outside_the_team_dir(parts: list[str]) -> None:
    """Property: whatever key a hostile server sends, nothing lands outside the team dir."""
    key = "/".join(parts)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        client = mock_client(root, hostile({key: "pwned"}))
        result = asyncio.run(client.pull())
        team = client.team_dir.resolve()
        for path in root.rglob("*"):
            if path.is_file() and path.read_bytes() == b"pwned":
                assert path.resolve().is_relative_to(team)
        assert len(result.written) + len(result.skipped) + result.unchanged == 1


async def test_conflicts_retry_twice_with_jitter_then_give_up(tmp_path: Path) -> None:
    calls: list[str] = []
    slept: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method + (" hashes" if "view=hashes" in str(request.url) else ""))
        if request.method == "PUT":
            return httpx.Response(412, json=wire.error_body("team_memory_conflict", "moved"))
        body = {"checksum": f"sha256:{len(calls)}", "version": len(calls), "content": {}}
        return httpx.Response(200, json=body)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    client = mock_client(tmp_path, handler, sleep=sleep, rand=lambda: 1.0)
    write_files(client.team_dir, {"a.md": "mine"})
    with pytest.raises(SyncConflictError):
        await client.push()
    assert calls == ["GET hashes", "PUT", "GET hashes", "PUT", "GET hashes", "PUT"]
    assert slept == [0.25, 0.5]
