"""The memory-mechanics section of an agent's system prompt, in three modes.

* ``individual``: one private memory dir; the agent writes one file per memory and (unless the
  index is maintained for it, ``skip_index``) a pointer line in ``MEMORY.md``.
* ``combined``: a private dir plus ``team/``, with per-type ``<scope>`` guidance and a rule that
  credentials never go to team memory.
* ``daily-log``: the agent only appends to ``logs/YYYY/MM/YYYY-MM-DD.md``; a nightly pass distills.

Dispatch (:func:`select_mode`): disabled -> none; daily-log -> combined (team on) -> individual.
The text is deterministic for the same inputs (no clock, no randomness), so it stays
prompt-cache friendly. ``MEMORY.md`` contents, when given, are embedded through
:func:`memdir.index.load_for_prompt`, which applies the 200-line / 25,000-char cap and appends a
warning naming the cap that fired.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.errors import ConfigError
from memdir.index import load_for_prompt, read_entrypoint
from memdir.prompts.templates import render

if TYPE_CHECKING:
    from memdir.config import Settings
    from memdir.paths import ResolvedPaths

SHARED, MODES = "shared.md", "modes.md"
EMPTY_INDEX_NOTE = (
    "Your MEMORY.md is currently empty. When you save new memories, they will appear here."
)
LOG_PATTERN = "logs/YYYY/MM/YYYY-MM-DD.md"
_TYPES = ("user", "feedback", "project", "reference")


class PromptMode(enum.StrEnum):
    INDIVIDUAL = "individual"
    COMBINED = "combined"
    DAILY_LOG = "daily-log"


def select_mode(*, enabled: bool, daily_log: bool, team: bool) -> PromptMode | None:
    """Which prompt applies: none when memory is off; daily-log wins over team."""
    if not enabled:
        return None
    if daily_log:
        return PromptMode.DAILY_LOG
    return PromptMode.COMBINED if team else PromptMode.INDIVIDUAL


def _block(text: str) -> str:
    return f"\n{text}\n" if text else ""


def _types(scoped: bool) -> str:
    scopes = {f"scope_{t}": "" for t in _TYPES}
    if scoped:
        scopes = {key: render(MODES, key) + "\n    " for key in scopes}
    return render(SHARED, "types", **scopes)


def _how_to_save(*, skip_index: bool, combined: bool) -> str:
    step = "skip_index_step" if skip_index else "index_step"
    intro = "skip_index_steps_intro" if skip_index else "individual_steps_intro"
    dir_note = ""
    if combined:
        dir_note = render(MODES, "combined_dir_choice" if skip_index else "combined_dir_index")
    return render(
        SHARED,
        "how_to_save",
        steps_intro=render(MODES, intro),
        index_step=_block(render(SHARED, step)),
        dir_note=_block(dir_note),
    )


def _searching(memory_dir: Path, transcripts_dir: Path | None) -> str:
    step = ""
    if transcripts_dir is not None:
        step = render(SHARED, "transcripts_step", transcripts_dir=str(transcripts_dir)) + "\n"
    return render(SHARED, "searching", memory_dir=str(memory_dir), transcripts_step=step)


def index_section(text: str, *, heading: str = "## MEMORY.md", team: bool = False) -> str:
    """``MEMORY.md`` as embedded in a prompt: capped, with a warning when a cap fired."""
    content = load_for_prompt(text).content or EMPTY_INDEX_NOTE
    if team:
        content = f'<team-memory-content source="shared">\n{content}\n</team-memory-content>'
    return f"{heading}\n\n{content}"


def render_index_context(path: Path, text: str, *, description: str, team: bool = False) -> str:
    """``MEMORY.md`` as injected into the conversation context (not the system prompt)."""
    content = load_for_prompt(text).content or EMPTY_INDEX_NOTE
    if team:
        content = f'<team-memory-content source="shared">\n{content}\n</team-memory-content>'
    return f"Contents of {path} ({description}):\n\n{content}"


def build_memory_prompt(
    memory_dir: Path,
    *,
    mode: PromptMode | str = PromptMode.INDIVIDUAL,
    team_dir: Path | None = None,
    index_text: str | None = None,
    team_index_text: str | None = None,
    skip_index: bool = False,
    extra_guidelines: str | None = None,
    search_past_context: bool = False,
    transcripts_dir: Path | None = None,
) -> str:
    """The memory section of a system prompt for ``mode``.

    ``index_text`` / ``team_index_text`` are the raw ``MEMORY.md`` texts to embed (``None``:
    leave the section out, e.g. when the caller injects the index into the conversation instead;
    ``""``: embed an "empty" note). ``team_dir`` defaults to ``<memory_dir>/team``.
    """
    kind = PromptMode(mode)
    combined = kind is PromptMode.COMBINED
    team = team_dir if team_dir is not None else memory_dir / "team"
    parts: list[str] = []
    if kind is PromptMode.DAILY_LOG:
        pattern = str(memory_dir / LOG_PATTERN)
        parts += [
            render(MODES, "daily_intro", memory_dir=str(memory_dir), log_pattern=pattern),
            render(MODES, "daily_what_to_log"),
            render(SHARED, "what_not_to_save"),
            render(MODES, "daily_index"),
        ]
    else:
        intro = "combined_intro" if combined else "individual_intro"
        parts.append(render(MODES, intro, memory_dir=str(memory_dir), team_dir=str(team)))
        if combined:
            parts.append(render(MODES, "combined_scope"))
        parts.append(_types(scoped=combined))
        parts.append(render(SHARED, "what_not_to_save"))
        if combined:
            parts.append(render(MODES, "combined_secrets"))
        parts.append(_how_to_save(skip_index=skip_index, combined=combined))
    parts += [
        render(SHARED, "when_to_access"),
        render(SHARED, "before_recommending"),
        render(SHARED, "persistence"),
    ]
    if extra_guidelines and extra_guidelines.strip():
        parts.append(render(SHARED, "extra", extra=extra_guidelines.strip()))
    if search_past_context:
        parts.append(_searching(memory_dir, transcripts_dir))
    if index_text is not None:
        heading = "## MEMORY.md (private)" if combined else "## MEMORY.md"
        parts.append(index_section(index_text, heading=heading))
    if combined and team_index_text is not None:
        parts.append(index_section(team_index_text, heading="## MEMORY.md (team)", team=True))
    return "\n\n".join(parts) + "\n"


def build_agent_memory_prompt(
    memory_dir: Path,
    *,
    scope: str,
    index_text: str,
    extra_guidelines: str | None = None,
) -> str:
    """The prompt for an agent type's own memory (user / project / local scope)."""
    scopes: Mapping[str, str] = {
        "user": "agent_scope_user",
        "project": "agent_scope_project",
        "local": "agent_scope_local",
    }
    if scope not in scopes:
        raise ConfigError(f"unknown agent memory scope {scope!r} (user, project or local)")
    body = build_memory_prompt(
        memory_dir, index_text=index_text, extra_guidelines=extra_guidelines
    ).rstrip("\n")
    heading, _, rest = body.partition("\n\n")
    return f"{heading}\n\n{render(MODES, scopes[scope])}\n\n{rest}\n"


def build_prompt_for_paths(
    paths: ResolvedPaths,
    settings: Settings,
    *,
    mode: PromptMode | str = "auto",
    skip_index: bool = False,
    include_index: bool = True,
    search_past_context: bool = True,
) -> str:
    """The prompt for a resolved project: ``mode="auto"`` dispatches on the settings.

    Returns ``""`` when auto-dispatch finds memory disabled. With ``include_index`` the current
    ``MEMORY.md`` (and the team one in combined mode) is read from disk and embedded, capped.
    """
    if mode == "auto":
        chosen = select_mode(
            enabled=settings.auto_memory_enabled,
            daily_log=settings.daily_log_mode,
            team=settings.team_memory_enabled,
        )
        if chosen is None:
            return ""
    else:
        chosen = PromptMode(mode)
    combined = chosen is PromptMode.COMBINED
    return build_memory_prompt(
        paths.memory_dir,
        mode=chosen,
        team_dir=paths.team_dir,
        index_text=read_entrypoint(paths.memory_dir) if include_index else None,
        team_index_text=read_entrypoint(paths.team_dir) if include_index and combined else None,
        skip_index=skip_index,
        extra_guidelines=settings.extra_guidelines,
        search_past_context=search_past_context,
        transcripts_dir=paths.transcripts_dir,
    )
