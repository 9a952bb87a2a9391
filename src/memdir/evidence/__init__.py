"""Evidence: every memory anchored to what it names in its repository, checked before injection.

One home for the concept: :mod:`.anchors` derives what a memory names, :mod:`.repo` reads git,
:mod:`.check` gives verdicts, :mod:`.verdict` the types and notes, :mod:`.service` the cached
entry every surface calls. See docs/evidence.md.
"""

from memdir.evidence.service import Screened, screen
from memdir.evidence.verdict import Evidence, Verdict

__all__ = ["Evidence", "Screened", "Verdict", "screen"]
