"""``memdir import``: bring in what users already have in other memory tools.

One module per source (:mod:`.claude_code`, :mod:`.codex`, :mod:`.gemini`, :mod:`.claude_mem`,
:mod:`.mem0`, :mod:`.mcp_memory`, :mod:`.basic_memory`, :mod:`.bundle`); every item-based
source goes through one pipeline: :mod:`.plan` decides (written, merged, skipped and why,
nothing written), :mod:`.apply` writes it all or nothing behind a snapshot that
``memdir import --undo`` restores; :mod:`.service` puts them together.

Nothing is imported here: the CLI builds its parser from :mod:`.names` alone, so ``memdir
import --help`` does not load the pipeline.
"""
