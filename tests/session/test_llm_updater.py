"""The LLM updater through the scripted fake driving the real sandbox and runner."""

from __future__ import annotations

from pathlib import Path

from memdir.llm.base import Completion
from memdir.llm.scripted import ScriptedProvider
from memdir.session.llm_updater import LLMUpdater, load_update_prompt
from memdir.session.memory import SessionMemory, SessionMemoryConfig
from memdir.session.messages import ChatMessage
from memdir.session.notes import builtin_template, parse_notes

STATE_DESC = "_What is being worked on right now, what is pending, the next step._"


def _conversation() -> list[ChatMessage]:
    return [ChatMessage.user("Please fix the flaky login test"), ChatMessage.assistant("Fixed it.")]


def _memory(tmp_path: Path, provider: ScriptedProvider) -> SessionMemory:
    path = tmp_path / "sess" / "session-memory" / "summary.md"
    return SessionMemory(path, LLMUpdater(provider), config=SessionMemoryConfig(init_tokens=1))


async def test_an_edit_of_the_notes_file_is_applied(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    mem = _memory(tmp_path, provider)
    edit = {
        "file_path": str(mem.path),
        "old_string": STATE_DESC,
        "new_string": STATE_DESC + "\nFixing the flaky login test; next: run CI.",
    }
    provider.add(Completion.from_tool_call("Edit", edit), Completion.from_text("Done."))
    convo = _conversation()
    outcome = await mem.update_now(convo)
    assert outcome.ok and outcome.changed and outcome.error is None
    notes = parse_notes(mem.path.read_text())
    assert notes.intact and notes.body("Current State").startswith("Fixing the flaky login test")
    first = provider.requests[0]
    assert first.messages[0].text == "Please fix the flaky login test"
    instruction = first.messages[-1].text
    assert str(mem.path) in instruction and "# Session Title" in instruction  # both substituted
    assert [t.name for t in first.tools] == ["Edit"]  # nothing else is offered
    assert mem.last_summarized_id == convo[-1].uuid and mem.state.updates == 1


async def test_forbidden_writes_are_refused(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    mem = _memory(tmp_path, provider)
    other = tmp_path / "sess" / "session-memory" / "other.md"
    outside = tmp_path / "evil.md"
    provider.add(
        Completion.from_tool_calls(
            [
                ("Write", {"file_path": str(mem.path), "content": "all gone"}),
                ("Edit", {"file_path": str(outside), "old_string": "a", "new_string": "b"}),
                ("Edit", {"file_path": str(other), "old_string": "a", "new_string": "b"}),
                ("Bash", {"command": "ls"}),
            ]
        ),
        Completion.from_text("ok"),
    )
    outside.write_text("a")
    outcome = await mem.update_now(_conversation())
    assert mem.path.read_text() == builtin_template()  # untouched
    assert outside.read_text() == "a" and not other.exists()
    assert outcome.error is not None and outcome.error.count("Permission denied") == 4
    results = provider.requests[1].messages[-1].blocks
    assert all(getattr(b, "is_error", False) for b in results)


async def test_structure_breaking_edit_is_rolled_back(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    mem = _memory(tmp_path, provider)
    mem.path.parent.mkdir(parents=True)
    before = builtin_template().replace(STATE_DESC, STATE_DESC + "\nEarlier state.")
    mem.path.write_text(before)
    provider.add(
        Completion.from_tool_calls(
            [
                (
                    "Edit",
                    {
                        "file_path": str(mem.path),
                        "old_string": "# Learnings\n",
                        "new_string": "# Lessons\n",
                    },
                ),
                (
                    "Edit",
                    {
                        "file_path": str(mem.path),
                        "old_string": "Earlier state.",
                        "new_string": "New state.",
                    },
                ),
            ]
        ),
        Completion.from_text("done"),
    )
    outcome = await mem.update_now(_conversation())
    assert outcome.rolled_back and not outcome.ok
    assert "section 'Learnings' is missing" in (outcome.error or "")
    assert mem.path.read_text() == before
    assert mem.state.updates == 0 and mem.last_summarized_id is None


async def test_provider_failure_keeps_notes(tmp_path: Path) -> None:
    from memdir.errors import ProviderUnavailableError

    provider = ScriptedProvider([ProviderUnavailableError("down")])
    mem = _memory(tmp_path, provider)
    outcome = await mem.update_now(_conversation())
    assert not outcome.ok and "down" in (outcome.error or "")
    assert mem.path.read_text() == builtin_template()


def test_user_prompt_overrides(tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("Update {{notesPath}} please. Notes: {{currentNotes}}")
    prompt = load_update_prompt(tmp_path)
    updater = LLMUpdater(ScriptedProvider(), prompt=prompt)
    text = updater.instruction(Path("/n/summary.md"), "{{notesPath}} literal", "condense!")
    assert text == "Update /n/summary.md please. Notes: {{notesPath}} literal\n\ncondense!"
    assert "Edit tool" in load_update_prompt(None)
