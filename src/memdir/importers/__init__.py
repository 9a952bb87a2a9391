"""``memdir import``: bring in what users already have in other memory tools.

One module per source (:mod:`.claude_code`, :mod:`.codex`, :mod:`.gemini`, :mod:`.claude_mem`,
:mod:`.mem0`, :mod:`.mcp_memory`, :mod:`.basic_memory`, :mod:`.bundle`); every item-based
source goes through one pipeline: :mod:`.plan` decides (written, merged, skipped and why,
nothing written), :mod:`.apply` writes it all or nothing behind a snapshot that
``memdir import --undo`` restores.
"""

from memdir.importers.apply import ApplyResult, apply_plan, import_runs, undo_import
from memdir.importers.base import Item, Source
from memdir.importers.plan import ImportPlan, Verdict, plan_import
from memdir.importers.service import SOURCE_NAMES, ImportOutcome, get_source, run_bundle, run_import

__all__ = [
    "SOURCE_NAMES",
    "ApplyResult",
    "ImportOutcome",
    "ImportPlan",
    "Item",
    "Source",
    "Verdict",
    "apply_plan",
    "get_source",
    "import_runs",
    "plan_import",
    "run_bundle",
    "run_import",
    "undo_import",
]
