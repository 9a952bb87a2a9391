"""The fast header writer says exactly what PyYAML says, or leaves it to PyYAML."""

from __future__ import annotations

import random

import pytest
import yaml

from memdir import frontmatter
from memdir.yaml_block import fast_dump

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
# the edge of the fast path's character set, and characters just past it
ALPHABET = "aZ09 _.,;:()/+=~?-'\"!&*%@|>[]{}#\u00a0\u3000中文é\u2028\ufeff\u0085\t\n\\"
TRICKY = [
    "true", "yes", "No", "null", "~", "1.5", "2026-12-07", "0x1F", "1e3", "on", "Off", ".inf",
    "-1", "+1", "1_000", "12:30", "0o17", "2026-12-07T10:00:00Z", "y", "=", "?", "-", "(a)",
    "a:b", "a: b", "a  b", "e.g.", "foo -", "user's", "a [b]", "中文: x", "{a}", "a{b}", "!a",
    "a!", "a #b", "a#b", "- a", "? a", "a:", "a ", " a", "",
]  # fmt: skip


def pyyaml(meta: dict[str, str]) -> str:
    return yaml.dump(
        meta,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1_000_000,
    )


def test_random_values_at_the_edge_dump_byte_for_byte_as_pyyaml() -> None:
    rng = random.Random(39)
    taken = 0
    for i in range(60_000):
        if i % 3 == 0:
            value = rng.choice(TRICKY)
        else:
            value = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 10)))
        key = rng.choice(["name", "description", "true", "source_id", "2026"])
        meta = {key: value, "type": "project"}
        fast = fast_dump(meta)
        if fast is not None:
            taken += 1
            assert fast == pyyaml(meta), (key, value)
    assert taken > 10_000  # the common case does take the fast path


@pytest.mark.parametrize(
    "meta",
    [
        {"name": "a", "merged_from": ["x", "y"]},  # a list
        {"name": "a", "count": 3},  # a number
        {"name": "a # not a comment"},
        {"name": " leading space"},
        {"name": "line\nbreak"},
        {"name": "a\u2028b"},
        {"name": ""},
        {},
    ],
)
def test_what_it_cannot_be_sure_of_is_left_to_pyyaml(meta: dict[str, object]) -> None:
    assert fast_dump(meta) is None
    text = frontmatter.dump(meta, "body\n")
    assert frontmatter.parse(text).meta == meta


def test_a_memory_header_reads_back_as_written() -> None:
    meta = {
        "name": "Staging DB on port 5433 (中文)",
        "description": "The user's staging database; see https://example.com/x?y=1",
        "type": "project",
        "created": "2026-12-07",
        "source_id": "entity:payments-service",
    }
    text = frontmatter.dump(meta, "body\n")
    assert fast_dump(meta) is not None
    assert frontmatter.parse(text).meta == meta
    assert "created: '2026-12-07'\n" in text


def test_headers_are_read_as_the_safe_loader_reads_them_or_left_to_it() -> None:
    from memdir.frontmatter import _Loader
    from memdir.yaml_block import fast_load

    rng = random.Random(40)
    taken = 0
    for _ in range(30_000):
        lines = []
        for _ in range(rng.randint(1, 4)):
            key = rng.choice(["name", "description", "true", "x_y", "2026", "on", "a b"])
            if rng.random() < 0.4:
                value = rng.choice([*TRICKY, "'quoted'", "'it''s'", "''", "'a: b'", "&a", "*a"])
            else:
                value = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 10)))
            lines.append(f"{key}: {value}")
        block = "\n".join(lines) + "\n"
        fast = fast_load(block)
        if fast is not None:
            taken += 1
            assert fast == yaml.load(block, Loader=_Loader), block
    assert taken > 300


def test_a_header_memdir_writes_is_read_back_without_the_loader() -> None:
    from memdir.yaml_block import fast_load

    meta = {
        "name": "Staging rebuild",
        "description": "The staging database is rebuilt every Sunday night",
        "type": "project",
        "created": "2026-12-07",
        "source_id": "entity:payments-service",
    }
    block = frontmatter.dump(meta, "").split("---\n")[1]
    assert fast_load(block) == meta
    assert fast_load(block.replace("\n", "\r\n")) is None  # CRLF: the loader's to read
