"""``memdir backfill``: learn from the sessions a project already had, before memdir was there.

:func:`make_plan` lists what each host's :class:`TranscriptSource` holds for the project (oldest
first, minus what the :class:`BackfillCursor` says is done), :func:`estimate` says what a model
run costs, and :class:`Backfill` runs extraction over each whole session, marking it done after
it. The entry point builds the sources from the hosts' dialects and the extractor from the
settings; this package imports neither.
"""

from memdir.backfill.cost import Estimate, estimate
from memdir.backfill.cursor import BackfillCursor, Done
from memdir.backfill.plan import Item, Plan, TranscriptSource, make_plan
from memdir.backfill.run import Backfill, Outcome, Report

__all__ = [
    "Backfill",
    "BackfillCursor",
    "Done",
    "Estimate",
    "Item",
    "Outcome",
    "Plan",
    "Report",
    "TranscriptSource",
    "estimate",
    "make_plan",
]
