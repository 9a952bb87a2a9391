"""The sync server over real HTTP (uvicorn child process) on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from memdir.team import wire
from memdir.team.server import ServerConfig, create_app
from tests.team.conftest import Remote, make_token, run_sync


def call(
    remote: Remote,
    method: str,
    *,
    token: str | None = "default",
    path: str = wire.API_PATH,
    repo: str | None = None,
    headers: dict[str, str] | None = None,
    **kwargs: Any,
) -> httpx.Response:
    all_headers = dict(headers or {})
    if token is not None:
        all_headers["Authorization"] = f"Bearer {remote.token if token == 'default' else token}"
    params = {"repo": repo or remote.repo, **kwargs.pop("params", {})}
    return httpx.request(
        method, remote.url + path, params=params, headers=all_headers, timeout=10, **kwargs
    )


def put(remote: Remote, entries: dict[str, str], **kwargs: Any) -> httpx.Response:
    return call(remote, "PUT", json={"entries": entries}, **kwargs)


def test_health_and_openapi(remote: Remote) -> None:
    assert httpx.get(remote.url + "/healthz").json() == {"status": "ok"}
    spec = httpx.get(remote.url + "/openapi.json").json()
    assert {wire.API_PATH, wire.ALIAS_PATH} <= set(spec["paths"])
    assert {"get", "put"} <= set(spec["paths"][wire.API_PATH])


@pytest.mark.parametrize(
    ("token", "repo", "status"),
    [
        (None, None, 401),
        ("mdt_not-a-token", None, 401),
        ("default", "acme/someone-else", 403),
        ("default", "not-a-repo", 400),
        ("default", "../x/y", 400),
    ],
)
def test_requests_need_a_token_scoped_to_the_repository(
    remote: Remote, token: str | None, repo: str | None, status: int
) -> None:
    for method in ("GET", "PUT"):
        response = call(remote, method, token=token, repo=repo, json={"entries": {"a.md": "x"}})
        assert response.status_code == status
        if status == 401:
            assert response.headers["www-authenticate"] == "Bearer"
    assert remote.state() is None


def test_missing_repository_is_404(remote: Remote) -> None:
    response = call(remote, "GET")
    assert response.status_code == 404


@pytest.mark.parametrize("path", [wire.API_PATH, wire.ALIAS_PATH])
def test_put_then_get_has_the_reference_shape(remote: Remote, path: str) -> None:
    entries = {"a.md": "alpha", "notes/b.md": "béta"}
    put_response = put(remote, entries, path=path)
    assert put_response.status_code == 200
    put_doc = put_response.json()
    assert put_doc["version"] == 1 and put_doc["repo"] == remote.repo
    response = call(remote, "GET", path=path)
    body = response.json()
    sums = {k: wire.checksum(v) for k, v in entries.items()}
    assert body["content"] == {"entries": entries, "entryChecksums": sums}
    assert body["checksum"] == wire.repo_checksum(sums) == put_doc["checksum"]
    assert set(body) == {"organizationId", "repo", "version", "lastModified", "checksum", "content"}
    assert response.headers["etag"] == f'"{body["checksum"]}"'
    hashes = call(remote, "GET", params={"view": "hashes"}).json()
    assert hashes["content"] == {"entryChecksums": sums}


def test_put_keeps_unsent_keys(remote: Remote) -> None:
    put(remote, {"a.md": "1", "b.md": "2"})
    put(remote, {"b.md": "two"})
    assert call(remote, "GET").json()["content"]["entries"] == {"a.md": "1", "b.md": "two"}


def test_if_none_match_gives_304(remote: Remote) -> None:
    checksum = put(remote, {"a.md": "1"}).json()["checksum"]
    assert call(remote, "GET", headers={"If-None-Match": f'"{checksum}"'}).status_code == 304
    stale = call(remote, "GET", headers={"If-None-Match": '"sha256:00"'})
    assert stale.status_code == 200


def test_if_match_guards_against_lost_updates(remote: Remote) -> None:
    first = put(remote, {"a.md": "1"}).json()["checksum"]
    second = put(remote, {"a.md": "2"}, headers={"If-Match": f'"{first}"'})
    assert second.status_code == 200
    stale = put(remote, {"a.md": "3"}, headers={"If-Match": f'"{first}"'})
    assert stale.status_code == 412
    state = remote.state()
    assert state is not None and state.entries == {"a.md": "2"} and state.version == 2


def test_too_many_entries_is_413_with_reference_details(remote: Remote) -> None:
    put(remote, {f"k{i:03}.md": "x" for i in range(90)})
    response = put(remote, {f"n{i:03}.md": "y" for i in range(20)})
    assert response.status_code == 413
    assert wire.error_details(response.json()) == {
        "error_code": "team_memory_too_many_entries",
        "max_entries": 100,
        "received_entries": 110,
    }
    state = remote.state()
    assert state is not None and len(state.entry_checksums) == 90 and state.version == 1


@pytest.mark.parametrize(
    ("entries", "status", "code"),
    [
        ({"big.md": "x" * (wire.MAX_ENTRY_BYTES + 1)}, 413, wire.ENTRY_TOO_LARGE),
        ({"a.md": "x" * 120_000, "b.md": "y" * 120_000}, 413, wire.BODY_TOO_LARGE),
        ({"../escape.md": "x"}, 400, "team_memory_invalid_key"),
        ({"/abs.md": "x"}, 400, "team_memory_invalid_key"),
        ({"a\\b.md": "x"}, 400, "team_memory_invalid_key"),
        ({"%2e%2e/x.md": "x"}, 400, "team_memory_invalid_key"),
        ({"nul\x00.md": "x"}, 400, "team_memory_invalid_key"),
        ({"": "x"}, 400, "team_memory_invalid_key"),
        ({"ok.md": "fine", "../bad.md": "x"}, 400, "team_memory_invalid_key"),
    ],
)
def test_invalid_writes_change_nothing(
    remote: Remote, entries: dict[str, str], status: int, code: str
) -> None:
    response = put(remote, entries)
    assert response.status_code == status
    assert wire.error_details(response.json())["error_code"] == code
    assert remote.state() is None


def test_an_entry_that_json_escaping_inflates_is_still_accepted(remote: Remote) -> None:
    text = "\x01" * 200_000  # 200 KB of text, 1.2 MB as JSON (\u0001 each)
    assert len(wire.encode_put({"ctl.md": text})) > 1_000_000
    response = call(
        remote, "PUT", content=wire.encode_put({"ctl.md": text}),
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    assert response.status_code == 200
    state = remote.state()
    assert state is not None and state.entries == {"ctl.md": text}


def test_one_large_entry_may_travel_alone(remote: Remote) -> None:
    text = "z" * 240_000  # over the 200 KB body budget, under the 250 KB entry limit
    assert put(remote, {"large.md": text}).status_code == 200
    state = remote.state()
    assert state is not None and state.entries == {"large.md": text}


@pytest.mark.parametrize(
    "body", [b"not json", b"[]", b'{"entries": []}', b'{"entries": {"a.md": 1}}', b"{}"]
)
def test_malformed_bodies_are_400(remote: Remote, body: bytes) -> None:
    response = call(remote, "PUT", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert remote.state() is None


def _nested(depth: int) -> bytes:
    return b'{"entries": {"a.md": ' + b'{"x": ' * depth + b'"y"' + b"}" * depth + b"}}"


BAD_BODY = "team_memory_bad_body"
# (name, raw PUT body, error code): each used to be a 500 (RecursionError, UnicodeEncodeError)
# or was stored although no client could ever write it (NUL on PostgreSQL, 4 KB keys).
HOSTILE_BODIES = [
    ("deep-array", b'{"entries": ' + b"[" * 99_999 + b"]" * 99_999 + b"}", BAD_BODY),
    ("deep-object", _nested(50_000), BAD_BODY),
    ("surrogate-key", b'{"entries": {"a\\ud800.md": "x"}}', "team_memory_invalid_key"),
    ("surrogate-value", b'{"entries": {"a.md": "x \\udc00 y"}}', "team_memory_bad_entry"),
    ("nul-value", b'{"entries": {"a.md": "x \\u0000 y"}}', "team_memory_bad_entry"),
    ("long-key", b'{"entries": {"' + b"k" * 4096 + b'.md": "x"}}', "team_memory_invalid_key"),
    ("long-segment", b'{"entries": {"' + b"s" * 256 + b'.md": "x"}}', "team_memory_invalid_key"),
]  # fmt: skip


def _assert_clear_400(response: httpx.Response, code: str) -> None:
    assert response.status_code == 400, response.text[:200]
    details = wire.error_details(response.json())
    assert details["error_code"] == code
    message = response.json()["error"]["message"]
    assert message and len(message) < 400  # one clear line, not the whole key echoed back


@pytest.mark.parametrize(
    ("name", "body", "code"), HOSTILE_BODIES, ids=[b[0] for b in HOSTILE_BODIES]
)
def test_hostile_bodies_are_clear_400s_over_http(
    remote: Remote, name: str, body: bytes, code: str
) -> None:
    """Regression (#8 item 7), against the real server process on both backends."""
    response = call(remote, "PUT", content=body, headers={"Content-Type": "application/json"})
    _assert_clear_400(response, code)
    assert remote.state() is None
    assert put(remote, {"after.md": "still serving"}).status_code == 200


def test_hostile_bodies_are_clear_400s_in_process(tmp_path: Path) -> None:
    """The same table through the ASGI app in this process (what an embedding host runs)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'team.db'}"
    token = run_sync(make_token(url, "acme/widgets"))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with TestClient(create_app(ServerConfig(url)), raise_server_exceptions=True) as client:
        for _, body, code in HOSTILE_BODIES:
            response = client.put(wire.API_PATH, params={"repo": "acme/widgets"}, content=body,
                                  headers=headers)  # fmt: skip
            _assert_clear_400(response, code)
        assert client.get(wire.API_PATH, params={"repo": "acme/widgets"},
                          headers=headers).status_code == 404  # fmt: skip


def test_revoked_token_stops_working(remote: Remote) -> None:
    from memdir.team import auth
    from memdir.team.storage import TeamStorage

    async def revoke_all() -> None:
        store = await TeamStorage.open(remote.server.db_url)
        try:
            for info in await auth.list_tokens(store):
                if remote.repo in info.repos:
                    await auth.revoke_token(store, info.id)
        finally:
            await store.close()

    assert put(remote, {"a.md": "1"}).status_code == 200
    other = run_sync(make_token(remote.server.db_url, remote.repo))
    run_sync(revoke_all())
    assert call(remote, "GET").status_code == 401
    assert call(remote, "GET", token=other).status_code == 401
