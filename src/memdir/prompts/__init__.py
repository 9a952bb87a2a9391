"""Prompt builders; the wording lives in this package's ``*.md`` templates."""

from memdir.prompts.memory import (
    EMPTY_INDEX_NOTE,
    PromptMode,
    build_agent_memory_prompt,
    build_memory_prompt,
    build_prompt_for_paths,
    index_section,
    render_index_context,
    select_mode,
)

__all__ = [
    "EMPTY_INDEX_NOTE",
    "PromptMode",
    "build_agent_memory_prompt",
    "build_memory_prompt",
    "build_prompt_for_paths",
    "index_section",
    "render_index_context",
    "select_mode",
]
