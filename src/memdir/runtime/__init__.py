"""The memory lifecycle of an agent session: :class:`MemoryRuntime` and its parts."""

from memdir.runtime.conversation import ConversationLog, attachment_block, with_attachments
from memdir.runtime.lifecycle import MemoryRuntime
from memdir.runtime.options import EndReport, RuntimeOptions, StartReport
from memdir.runtime.tasks import TaskBoard, TaskStatus

__all__ = [
    "ConversationLog",
    "EndReport",
    "MemoryRuntime",
    "RuntimeOptions",
    "StartReport",
    "TaskBoard",
    "TaskStatus",
    "attachment_block",
    "with_attachments",
]
