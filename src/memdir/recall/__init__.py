"""Recall: choose which memories to surface for a query (LLM side query or offline ranking)."""

from memdir.recall.base import MAX_SELECTED, Selection, Selector

__all__ = ["MAX_SELECTED", "Selection", "Selector"]
