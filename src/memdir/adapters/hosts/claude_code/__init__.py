"""Claude Code: its dialect (:mod:`.dialect`) and its plugin checks (:mod:`.duplicates`)."""

from memdir.adapters.hosts.claude_code.dialect import DIALECT

__all__ = ["DIALECT"]
