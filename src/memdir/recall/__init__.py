"""Recall: choose which memories to surface for a query (LLM side query or offline ranking).

Only the light pieces are re-exported; the offline selector (numpy, onnxruntime) is imported from
``memdir.recall.local`` by those who need it.
"""

from memdir.recall.base import MAX_SELECTED, Selection, Selector
from memdir.recall.llm_select import LLMSelector, recent_successful_tools

__all__ = ["MAX_SELECTED", "LLMSelector", "Selection", "Selector", "recent_successful_tools"]
