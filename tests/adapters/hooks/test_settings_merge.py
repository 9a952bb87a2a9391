"""Merging memdir's hooks into settings files people really have, and taking them out again."""

from __future__ import annotations

import json

import pytest

from memdir.adapters.hooks import settings_merge as sm
from memdir.adapters.hosts.claude_code import DIALECT
from memdir.errors import InstallError

SPECS = DIALECT.hook_specs(["/opt/memdir/bin/memdir"])

# A user settings file with another tool's hooks (a formatter, a notifier), permissions, env,
# a status line and keys memdir has never heard of — 2-space indented, as Claude Code writes it.
REAL_USER_SETTINGS = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)"]
  },
  "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0"},
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": "npx prettier --write \\"$FILE\\""}]
      }
    ],
    "Stop": [
      {
        "hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [{"type": "command", "command": "python3 ~/.claude/hooks/log_prompt.py"}]
      }
    ]
  },
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
  "someFutureKey": {"nested": [1, 2, {"x": null}]},
  "includeCoAuthoredBy": false
}
"""


def test_merge_keeps_every_other_key_and_hook() -> None:
    before = sm.parse(REAL_USER_SETTINGS, where="settings.json")
    after, created = sm.add_hooks(before, SPECS)
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        k: v for k, v in before.items() if k != "hooks"
    }
    assert after["hooks"]["PostToolUse"] == before["hooks"]["PostToolUse"]
    assert after["hooks"]["Stop"][0] == before["hooks"]["Stop"][0]
    assert after["hooks"]["Stop"][1]["hooks"][0]["command"] == "/opt/memdir/bin/memdir hook stop"
    assert after["hooks"]["UserPromptSubmit"][0] == before["hooks"]["UserPromptSubmit"][0]
    assert list(after)[: len(before)] == list(before)  # key order kept
    assert sorted(created) == ["hooks.PreCompact", "hooks.SessionEnd", "hooks.SessionStart"]
    assert before == sm.parse(REAL_USER_SETTINGS, where="x")  # input not mutated


def test_merge_is_idempotent() -> None:
    once, _ = sm.add_hooks(sm.parse(REAL_USER_SETTINGS, where="s"), SPECS)
    twice, created = sm.add_hooks(once, SPECS)
    assert twice == once and created == []


def test_remove_gives_back_the_original_bytes() -> None:
    before = sm.parse(REAL_USER_SETTINGS, where="s")
    after, created = sm.add_hooks(before, SPECS)
    removed = sm.remove_hooks(after, [s.command for s in SPECS], created)
    assert removed == before
    original = json.dumps(before, indent=2, ensure_ascii=False) + "\n"
    assert sm.dump(removed, like=original) == original


def test_remove_keeps_a_hook_the_user_added_to_our_group() -> None:
    after, created = sm.add_hooks({}, SPECS)
    after["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "say done"})
    removed = sm.remove_hooks(after, [s.command for s in SPECS], created)
    assert removed == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}


def test_remove_keeps_empty_containers_that_were_there_before() -> None:
    before = {"hooks": {"Stop": []}, "other": 1}
    after, created = sm.add_hooks(before, SPECS)
    assert "hooks.Stop" not in created and "hooks" not in created
    assert sm.remove_hooks(after, [s.command for s in SPECS], created) == before


def test_uninstall_without_a_record_finds_memdir_hooks_by_shape() -> None:
    after, _ = sm.add_hooks(sm.parse(REAL_USER_SETTINGS, where="s"), SPECS)
    found = sm.memdir_hook_commands(after)
    assert sorted(found) == sorted(s.command for s in SPECS)


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        ('{\n    "a": 1\n}\n', '{\n    "a": 1,\n    "hooks": {}\n}\n'),
        ('{\n\t"a": 1\n}', '{\n\t"a": 1,\n\t"hooks": {}\n}'),
        ('{"a": 1}', '{\n  "a": 1,\n  "hooks": {}\n}'),
    ],
)
def test_dump_keeps_indentation_and_final_newline(text: str, layout: str) -> None:
    assert sm.dump({"a": 1, "hooks": {}}, like=text) == layout


@pytest.mark.parametrize(
    "text",
    [
        '{"hooks": []}',
        '{"hooks": {"Stop": {"not": "a list"}}}',
        "[1, 2]",
        '{"a": 1, // a comment\n}',
        '{"a": ',
    ],
)
def test_a_file_memdir_cannot_merge_is_refused(text: str) -> None:
    with pytest.raises(InstallError):
        sm.add_hooks(sm.parse(text, where="settings.json"), SPECS)


def test_servers_merge_and_unmerge() -> None:
    config = {"mcpServers": {"github": {"command": "gh-mcp"}}, "numStartups": 42}
    server = {"command": "memdir", "args": ["mcp"]}
    after, created = sm.set_server(config, ("mcpServers",), "memdir", server)
    assert after["mcpServers"] == {"github": {"command": "gh-mcp"}, "memdir": server}
    assert created == []
    assert sm.set_server(after, ("mcpServers",), "memdir", server)[0] == after
    assert sm.remove_server(after, ("mcpServers",), "memdir", created) == config
    with pytest.raises(InstallError, match="already configured differently"):
        sm.set_server(after, ("mcpServers",), "memdir", {"command": "other"})
    fresh, made = sm.set_server({}, ("mcpServers",), "memdir", server)
    assert made == ["mcpServers"]
    assert sm.remove_server(fresh, ("mcpServers",), "memdir", made) == {}
