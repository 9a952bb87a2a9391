"""The LLM notes updater: a sandboxed agent whose only tool is an exact-string Edit of one file.

Invariants:

* The toolset is :func:`memdir.agent.policy.single_file_policy` over the agent's memory tools
  rooted at the notes' directory: every tool but Edit is hidden and refused, and Edit is refused
  for any path but the notes file. Writes go through :class:`memdir.agent.fileroot.FileRoot`
  (atomic, locked, exact unique match).
* After the run the structure is verified (:func:`memdir.session.notes.structure_problems`); if
  the model broke it, the previous notes are written back, the outcome says ``rolled_back`` with
  the reasons, and the update does not count (the cursor does not move).
* The conversation is the prefix, unchanged; the instruction (the user's ``prompt.md`` if there
  is one, ``{{currentNotes}}`` and ``{{notesPath}}`` substituted in one pass) comes last.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from memdir.agent.fileroot import FileRoot
from memdir.agent.policy import single_file_policy
from memdir.agent.runner import AgentRunner
from memdir.agent.tools import memory_tools
from memdir.llm.base import Provider
from memdir.session.memory import UpdateOutcome
from memdir.session.messages import ChatMessage, to_llm_messages
from memdir.session.notes import (
    parse_notes,
    read_notes,
    structure_problems,
    substitute,
    write_notes,
)

log = logging.getLogger(__name__)

SYSTEM = (
    "You keep the running notes of a working session between a user and an AI assistant. You "
    "change the notes file only with the Edit tool."
)

DEFAULT_PROMPT = """\
Do not answer or continue the conversation above. Your only job now is to update the session \
notes file at {{notesPath}} so that it reflects the conversation so far.

Its current contents (you have already read it; do not read it again):
<current-notes>
{{currentNotes}}
</current-notes>

Rules:
- Use only the Edit tool, with file_path {{notesPath}}; make all your edits in one turn, in \
parallel, then stop.
- Never change, move or remove a line starting with "# " or the italic description line under \
it, and never add a section. Write under the description lines.
- Skip sections with nothing new. Be dense: facts, names, paths, commands, numbers.
- Key results: copy exact outputs the user asked for.
- Keep each section under about 2,000 tokens.
- Always rewrite Current State to say what is happening now and what comes next.
"""


def load_update_prompt(config_dir: Path | None) -> str:
    """The user's ``prompt.md`` in ``config_dir`` if it exists, else the built-in prompt."""
    if config_dir is None:
        return DEFAULT_PROMPT
    try:
        text = (config_dir / "prompt.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return DEFAULT_PROMPT
    except (OSError, UnicodeDecodeError) as exc:
        log.warning(
            "session notes prompt in %s unreadable (%s); using the built-in one", config_dir, exc
        )
        return DEFAULT_PROMPT
    return text if text.strip() else DEFAULT_PROMPT


class LLMUpdater:
    """Updates the notes through the sandboxed agent runner (see the module docstring)."""

    name = "llm"
    cursor_at_end = False

    def __init__(
        self,
        provider: Provider,
        *,
        prompt: str = DEFAULT_PROMPT,
        system: str = SYSTEM,
        max_turns: int = 3,
        time_limit: float = 120.0,
        max_tokens: int = 4096,
    ) -> None:
        self.provider = provider
        self.prompt = prompt
        self.system = system
        self.max_turns = max_turns
        self.time_limit = time_limit
        self.max_tokens = max_tokens

    def instruction(self, path: Path, current: str, extra: str) -> str:
        text = substitute(self.prompt, {"currentNotes": current, "notesPath": str(path)})
        return f"{text}\n\n{extra}" if extra else text

    async def update(
        self,
        path: Path,
        *,
        current: str,
        template: str,
        messages: Sequence[ChatMessage],
        new_messages: Sequence[ChatMessage],
        instruction_extra: str,
    ) -> UpdateOutcome:
        root = FileRoot(path.parent)
        toolset = single_file_policy(memory_tools(root, cwd=path.parent), path)
        runner = AgentRunner(
            self.provider,
            toolset,
            system=self.system,
            max_turns=self.max_turns,
            time_limit=self.time_limit,
            max_tokens=self.max_tokens,
        )
        run = await runner.run(
            self.instruction(path, current, instruction_extra), prefix=to_llm_messages(messages)
        )
        after = await asyncio.to_thread(read_notes, path) or ""
        problems = structure_problems(after, template)
        if problems:
            await asyncio.to_thread(write_notes, path, current)
            reason = "; ".join(problems)
            log.warning(
                "session notes update broke the structure (%s); kept the previous notes", reason
            )
            return UpdateOutcome(
                ok=False,
                updater=self.name,
                rolled_back=True,
                error=f"the update broke the notes structure ({reason}); previous notes kept",
                notes_tokens=parse_notes(current).total_tokens,
            )
        ok = run.stop_reason in ("end_turn", "max_turns")
        denied = [f"{c.name}: {c.result}" for c in run.denials]
        error = run.error or ("; ".join(denied) if denied else None)
        return UpdateOutcome(
            ok=ok,
            updater=self.name,
            changed=after != current,
            error=error,
            notes_tokens=parse_notes(after).total_tokens,
        )
