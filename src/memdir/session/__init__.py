"""Session memory and the compaction ladder: one long conversation that keeps its meaning.

See ``docs/session.md``. Messages are :class:`ChatMessage` (Anthropic Messages shape); the notes
file is kept by :class:`SessionMemory` with an offline or an LLM updater; the :class:`Compactor`
runs the ladder (microcompact → session-memory compaction → full summarising compaction).
"""

from memdir.session.convert import append_compaction, load_transcript, messages_from_entries
from memdir.session.keep import KeepConfig, messages_to_keep_index, preserve_invariants
from memdir.session.memory import (
    NotesUpdater,
    SessionMemory,
    SessionMemoryConfig,
    UpdateOutcome,
)
from memdir.session.messages import ChatMessage, api_shape_problems, repair, to_api
from memdir.session.notes import builtin_template, load_template, structure_problems
from memdir.session.offline import (
    OfflineUpdater,
    aupdate_notes_from_transcript,
    update_notes_from_transcript,
)
from memdir.session.tokens import Window, estimate_tokens, message_tokens

__all__ = [
    "ChatMessage",
    "KeepConfig",
    "NotesUpdater",
    "OfflineUpdater",
    "SessionMemory",
    "SessionMemoryConfig",
    "UpdateOutcome",
    "Window",
    "api_shape_problems",
    "append_compaction",
    "aupdate_notes_from_transcript",
    "builtin_template",
    "estimate_tokens",
    "load_template",
    "load_transcript",
    "message_tokens",
    "messages_from_entries",
    "messages_to_keep_index",
    "preserve_invariants",
    "repair",
    "structure_problems",
    "to_api",
    "update_notes_from_transcript",
]
