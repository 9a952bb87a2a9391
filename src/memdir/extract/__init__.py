"""Memory extraction after each turn: the background service, the LLM agent and the rules.

:class:`ExtractionService` schedules; an :class:`Extractor` does the work — either
:class:`AgentExtractor` (a sandboxed LLM agent) or :class:`RuleExtractor` (offline, explicit
statements only).
"""

from memdir.extract.agent import AgentExtractor
from memdir.extract.base import ConversationMessage, ExtractionResult, Extractor, Turn
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.service import ExtractionService
from memdir.extract.transcript import turns_from_entries

__all__ = [
    "AgentExtractor",
    "ConversationMessage",
    "ExtractionResult",
    "ExtractionService",
    "Extractor",
    "RuleExtractor",
    "Turn",
    "turns_from_entries",
]
