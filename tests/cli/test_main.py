"""The CLI imports only the command group it runs (hooks start a process on every prompt)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from memdir.cli.main import _GROUPS, build_parser, command_word


@pytest.mark.parametrize("group", sorted(_GROUPS))
def test_each_group_registers_exactly_the_words_listed(group: str) -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(f"memdir.cli.{group}").register(sub)
    assert set(sub.choices) == set(_GROUPS[group])


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (["hook", "stop"], "hook"),
        (["--claude", "--dir", "/x", "recall", "q"], "recall"),
        (["--settings", "hook", "where"], "where"),
        (["--json"], None),
        ([], None),
    ],
)
def test_command_word(argv: list[str], word: str | None) -> None:
    assert command_word(argv) == word


def test_full_parser_for_help_and_unknown_words() -> None:
    every = {w for words in _GROUPS.values() for w in words}
    parser = build_parser("no-such-command")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == every


def test_the_hook_path_does_not_import_recall_team_or_llm() -> None:
    code = (
        "import sys; from memdir.cli.main import build_parser; build_parser('hook');"
        "import memdir.adapters.hooks.handlers, memdir.adapters.recall_client;"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'onnxruntime', 'yaml', 'asyncio', 'httpx', 'mcp')"
        " or m.startswith(('memdir.recall', 'memdir.team', 'memdir.llm', 'memdir.store'))];"
        "print(','.join(sorted(heavy)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
