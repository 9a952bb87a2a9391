"""Wire helpers: checksums, the batching rule of the reference, error bodies, ETags."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.team import wire


def test_checksum_is_prefixed_sha256_of_utf8() -> None:
    text = "naïve ✓"
    assert wire.checksum(text) == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_repo_checksum_depends_only_on_the_pairs() -> None:
    a = {"x.md": wire.checksum("1"), "y.md": wire.checksum("2")}
    b = dict(reversed(list(a.items())))
    assert wire.repo_checksum(a) == wire.repo_checksum(b)
    assert wire.repo_checksum(a) != wire.repo_checksum({**a, "y.md": wire.checksum("3")})
    assert wire.repo_checksum(a) != wire.repo_checksum({"x.md": a["x.md"]})


def test_body_bytes_bounds_the_encoded_body() -> None:
    entries = {"a.md": "plain", "ü/b.md": 'quote " and \n newline ✓'}
    assert len(wire.encode_put(entries)) <= wire.body_bytes(entries)
    assert wire.body_bytes({}) == len('{"entries":{}}')


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        ([10, 10, 10], [3]),  # all fit
        ([60_000] * 4, [3, 1]),  # the fourth would go over 200 KB
        ([300_000, 10], [1, 1]),  # oversized entry travels alone
        ([10, 300_000, 10], [1, 1, 1]),
        ([], []),
    ],
)
def test_batch_sizes(sizes: list[int], expected: list[int]) -> None:
    entries = {f"k{i:03}.md": "x" * n for i, n in enumerate(sizes)}
    batches = wire.batch_entries(entries)
    assert [len(b) for b in batches] == expected


@given(st.dictionaries(st.text(min_size=1, max_size=20), st.text(max_size=3000), max_size=40))
def test_batches_partition_in_sorted_order_under_the_limit(entries: dict[str, str]) -> None:
    limit = 5_000
    batches = wire.batch_entries(entries, limit=limit)
    flat = [k for batch in batches for k in batch]
    assert flat == sorted(entries)
    for batch in batches:
        assert len(batch) == 1 or wire.body_bytes(batch) <= limit
        assert json.loads(wire.encode_put(batch)) == {"entries": batch}


def test_too_many_entries_body_has_the_reference_shape() -> None:
    body = wire.too_many_entries_body(100, 120)
    assert wire.error_details(body) == {
        "error_code": "team_memory_too_many_entries",
        "max_entries": 100,
        "received_entries": 120,
    }


@pytest.mark.parametrize("body", [None, [], {"error": "x"}, {"error": {"details": 3}}])
def test_error_details_tolerates_any_shape(body: object) -> None:
    assert wire.error_details(body) == {}


@pytest.mark.parametrize(
    ("header", "tags"),
    [(None, []), ('"abc"', ["abc"]), ('W/"a", "b"', ["a", "b"]), ("*", ["*"]), ("", [])],
)
def test_unquote_etag(header: str | None, tags: list[str]) -> None:
    assert wire.unquote_etag(header) == tags


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("acme/widgets", True),
        ("A-b.c_d/e.f", True),
        ("acme", False),
        ("a/b/c", False),
        ("../etc", False),
        ("a/..", False),
        ("a b/c", False),
        ("/b", False),
        ("a/" + "x" * 300, False),
    ],
)
def test_valid_repo(name: str, valid: bool) -> None:
    assert wire.valid_repo(name) is valid
