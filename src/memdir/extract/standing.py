"""Standing rules said without "always" or "never": the other words users keep a rule in.

Read from real sessions (issue #30, the gap study over 70 sessions of four repositories): users
state what must hold in later sessions as a complaint about what the agent did unasked ("I did
not say commit anything"), as a condition ("if you change something that can influence the
results, test for real"), as a requirement on every member of a class ("each test should take
<30s"), as what is not supposed to happen ("we're not supposed to use the docker in dev"), as a
choice between two tools with the context it holds in ("in dev, we should be using a local
mlflow rather than the docker"), as a convention for a recurring artefact ("use prefix 'rwr/'
for the branch name"), as a tool's role ("use uv as the package manager"), as a permission ("you
can commit whenever you want"), as a writing convention ("please use the british spelling", "it
shouldn't sound so AI generated"), as the cadence of work ("check in after each task", "push
early") or as who they are on a service ("my github user is khaong").

Each form is narrow on purpose — one sentence, a cue that says the rule outlives the task, and
its subject not a pronoun (the thing at hand: "don't check this in" is this task's). A form
here returns a :class:`Said`; :func:`memdir.extract.rules.classify` makes the candidate (dates,
**Why:** from a "because"/"so we can" clause, the reference's form).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir.model import MemoryType

_F = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class Said:
    type: MemoryType
    statement: str
    rule: str
    name: str | None = None
    how: str | None = None  # **How to apply:** when the statement's own words cannot give one
    why: str | None = None  # **Why:** the user's own reason, when a rule finds one


# what an agent does on its own initiative, and a user then says nobody asked for
_ACTS = (
    r"commit|push|merge|deploy|publish|release|amend|rebase|reset|revert|delete|remove|"
    r"install|upgrade|downgrade|rewrite|refactor|rename|create|add|change|modify|edit|touch|"
    r"open|close|run|start|restart|format|squash|tag|bump|update"
)
_UNASKED = re.compile(
    r"^(?:no+[,.!]*\s+)?i\s+(?:did not|didn't|didnt|never|have not|haven't)\s+"
    r"(?:ask(?:ed)?\s+(?:you\s+)?(?:to\s+)?|said\s+(?:to\s+)?|say\s+(?:to\s+)?|told\s+you\s+to\s+|"
    rf"tell\s+you\s+to\s+|want(?:ed)?\s+you\s+to\s+)(?P<x>(?:{_ACTS})\b.*)$",
    _F,
)
# "change it", "clean that up": the object is the thing at hand, not a kind of work
AT_HAND = re.compile(
    r"^\w+(?:\s+(?:up|out|back|down|off|over))?\s+(?:it|this|that|them|these|those)\b", _F
)
_CONDITION = re.compile(
    r"^(?P<cond>(?:if|when|whenever|every time|each time|any time)\s+(?:you|we)\s+"
    r"(?:\w+\s+)?(?:change|add|edit|touch|modify|update|create|write|remove|delete|rename|"
    r"commit|push|open|release|deploy|bump|introduce|make|fix|refactor)\s+(?P<what>[^,]{2,80}?))"
    r",\s*(?:please\s+)?(?P<do>(?!(?:i|we|you|it|this|that|they|there|then)\b)[a-z]+\b.+)$",
    _F,
)
# a condition holds later only when it names a kind of change, not the change at hand
_GENERIC = re.compile(
    r"^(?:a|an|any|anything|something|some|new|code|tests?|files?|dependenc|the (?:schema|api|"
    r"public api|database|db|config|cli|ui|docs?|migrations?|models?))",
    _F,
)
_EACH = re.compile(
    r"^(?P<subj>(?:each|every|all)\s+[a-z][\w/-]*(?:\s+[a-z][\w/-]*){0,2}?)\s+"
    r"(?:should|needs? to|has to|have to)\s+(?P<x>.+)$",
    _F,
)
# "each one should be fine", "all of them need to pass": what is at hand, or a verdict on it
_NOT_A_CLASS = re.compile(r"^\w+\s+(?:one|ones|of|other|time|thing|things)\b", _F)
_VERDICT = re.compile(r"^(?:be\s+)?(?:fine|ok|okay|good|enough|done|work|pass)\b\W*\w*\W*$", _F)
_NOT_SUPPOSED = re.compile(
    r"^(?:we're|we are|you're|you are|we|you)\s+(?:not|never)\s+supposed\s+to\s+(?P<x>.+)$", _F
)
_SHOULD_USE = re.compile(
    r"^(?:(?P<ctx>(?:in|for|on|during)\s+[\w/ -]{2,24}),\s*)?(?:we|you)\s+should\s+"
    r"(?:always\s+)?(?:be\s+)?(?:use|using)\s+(?P<a>.+?),?\s+(?:rather than|instead of|"
    r"rather from|and not)\s+(?P<b>.+)$",
    _F,
)
_ARTEFACTS = (
    r"branch(?:es|\s+names?)?|commit messages?|commits|pr titles?|pull request titles?|"
    r"pr descriptions?|tags|changelog entries|release notes"
)
_CONVENTION = re.compile(
    rf"^(?:please\s+)?use\s+(?P<x>.+?)\s+for\s+(?:the\s+|all\s+|every\s+|each\s+|our\s+)?"
    rf"(?P<y>{_ARTEFACTS})\b(?P<rest>.*)$",
    _F,
)
_ROLES = (
    r"package manager|test runner|formatter|linter|build tool|build system|task runner|bundler|"
    r"type ?checker|runtime|orm|database|db|logger|logging library|http client|ui library|"
    r"component library|css framework|test framework"
)
_TOOL_ROLE = re.compile(
    rf"^(?:please\s+)?(?:use|go with|stick with|stick to)\s+(?P<x>[\w.@/-]+(?:\s[\w.@/-]+)?)\s+"
    rf"(?:as|for)\s+(?:the\s+|our\s+|a\s+|your\s+)?(?P<role>{_ROLES})\b[\s.!]*$",
    _F,
)
# "you can commit whenever you want": a standing permission (the agent need not ask each time)
_PERMISSION = re.compile(
    r"(?:^|\b)you\s+(?:can|may|are allowed to)\s+(?P<x>(?!(?:do|go|try)\b)[a-z]+\b.*?)\s+"
    r"(?:whenever|any ?time)\s+you\s+(?:want|like|need(?: to)?|see fit)\b(?P<rest>.*)$",
    _F,
)
# "it shouldn't sound so AI generated", "the staccato short sentences i don't like": how the
# user wants written text to read, whatever the text at hand
_AI_VOICE = re.compile(
    r"\b(?:sounds?|reads?|feels?)\s+(?:so\s+|too\s+|very\s+|really\s+|a bit\s+)?"
    r"(?:ai[- ]generated|ai[- ]written|robotic|like (?:an? )?(?:ai|chatgpt|llm|bot))\b|"
    r"\bstacc?att?o\b|"
    r"\bi\s+(?:hate|don'?t like|dislike|can'?t stand)\s+(?:the\s+|all the\s+)?(?:\w+\s+){0,2}"
    r"(?:em[- ]?dashes|emojis|buzzwords|bullet points everywhere)\b",
    _F,
)
# "check in after each task completes", "do not silently run through all 7": the cadence of work
_CHECK_IN = re.compile(
    r"\b(?:check in|report back|give me (?:a )?status(?: update)?s?|stop and (?:ask|check))\s+"
    r"(?:with me\s+)?after\s+(?:each|every)\s+\w+",
    _F,
)
# "push early and open a draft PR on first push": a habit, not this push
_EARLY = re.compile(r"\b(?:commit|push)\s+early\b(?:\s+and\s+often)?", _F)
_SPELLING = re.compile(
    r"^(?:please\s+)?(?:use|write in|stick to|stick with)\s+(?:the\s+)?"
    r"(?P<x>(?:british|american|australian|aus|uk|us|canadian)(?:/(?:british|uk|aus))?"
    r"\s+(?:english\s+)?spelling|(?:british|american|australian)\s+english)\b[\s:;()!.]*$",
    _F,
)
_ACCOUNT = re.compile(
    r"^my\s+(?P<what>(?:[\w-]+\s+){0,2}?(?:user(?:name)?|handle|login|account|user id))\s+"
    r"(?:is|=)\s+(?P<x>@?[\w.-]{2,40})$",
    _F,
)


_NEEDS_NEXT = re.compile(
    r"\s+(?:a|an|the|of|to|in|on|for|with|by|that|which|and|or|can|could|will|would|is|are|"
    r"first|each|every|all|own|their|its|our)$",
    _F,
)


def _words(text: str, limit: int) -> str:
    cut = " ".join(text.split()[:limit])
    while _NEEDS_NEXT.search(cut):  # a name never ends on a word that needs the next one
        cut = _NEEDS_NEXT.sub("", cut)
    return cut


def _condition_name(m: re.Match[str]) -> str:
    """ "If you change X, test for real by piping …" → "Test for real when you change X"."""
    do = re.split(r"\s+(?:by|so|to|because|since|and then)\s+|[,;:]", m.group("do"), maxsplit=1)[0]
    when = re.sub(
        r"^(?:if|whenever|every time|each time|any time)\b", "when", m.group("cond"), flags=_F
    )
    head = _words(do, 6)
    return _words(f"{head[0].upper()}{head[1:]} {when.lower()}", 14)


# the forms that say by themselves that they outlive the task, even inside a task's brief
_LASTING = frozenset(
    {"unasked", "not-supposed", "convention", "tool-role", "permission", "spelling", "account"}
    | {"ai-voice", "check-in", "early"}
)


def lasting(rule: str) -> bool:
    return rule in _LASTING


def said(text: str) -> Said | None:
    """The standing rule one sentence states in one of this module's forms, or None."""
    if m := _UNASKED.match(text):
        x = m.group("x").strip()
        if AT_HAND.match(x) or len(x.split()) > 12:
            return None  # "I didn't ask you to change that": the thing at hand
        return Said(MemoryType.FEEDBACK, f"Don't {x} unless the user asks", "unasked")
    if (m := _CONDITION.match(text)) and (
        _GENERIC.match(m.group("what")) or re.match(r"whenever|every|each|any", m.group("cond"), _F)
    ):
        return Said(MemoryType.FEEDBACK, text, "condition", _condition_name(m))
    if m := _EACH.match(text):
        if not _NOT_A_CLASS.search(m.group("subj")) and not _VERDICT.match(m.group("x")):
            return Said(MemoryType.PROJECT, text, "each-should")
        return None
    if (m := _NOT_SUPPOSED.match(text)) and not AT_HAND.match(m.group("x")):
        if len(m.group("x").split()) >= 2:
            return Said(MemoryType.FEEDBACK, f"Don't {m.group('x')}", "not-supposed")
        return None
    if m := _SHOULD_USE.match(text):
        a, b, where = m.group("a"), m.group("b"), m.group("ctx")
        if not where:
            return Said(MemoryType.FEEDBACK, f"Use {a} instead of {b}", "use")
        name = _words(f"Use {a} {where[0].lower()}{where[1:]}", 10)
        return Said(
            MemoryType.FEEDBACK, f"{where.capitalize()}, use {a} instead of {b}", "use", name
        )
    if (m := _CONVENTION.match(text)) and not AT_HAND.match(f"use {m.group('x')}"):
        return Said(MemoryType.FEEDBACK, text, "convention")
    if (m := _TOOL_ROLE.match(text)) and not AT_HAND.match(f"use {m.group('x')}"):
        rule = f"Use {m.group('x')} as the {m.group('role').lower()}"
        return Said(MemoryType.FEEDBACK, rule, "tool-role", rule)
    if m := _PERMISSION.search(text):
        rest = m.group("rest").strip(" .!").strip("()").strip()
        statement = f"The agent may {m.group('x')} whenever it sees fit" + (
            f", {rest}" if rest else ""
        )
        name = f"{m.group('x')[0].upper()}{m.group('x')[1:]} without asking first"
        return Said(MemoryType.FEEDBACK, statement, "permission", _words(name, 10))
    if _AI_VOICE.search(text) and not re.search(r"\b(?:it'?s fine|i like|love)\b", text, _F):
        return Said(
            MemoryType.FEEDBACK,
            "Write text for people in a natural voice: it must not sound AI-generated (no "
            "staccato runs of short sentences, no stock phrasing)",
            "ai-voice",
            "Don't write text that sounds AI-generated",
            "When writing copy, docs, messages or stories for people, vary the sentence length, "
            "write as a person would and reread it for stock phrasing before showing it.",
        )
    if _CHECK_IN.search(text):
        return Said(
            MemoryType.FEEDBACK,
            text,
            "check-in",
            "Check in with the user after each task",
            "When carrying out a plan of several tasks, stop after each one and report what was "
            "done and what comes next before starting the next.",
        )
    if _EARLY.search(text) and not AT_HAND.match(text):
        return Said(MemoryType.FEEDBACK, text, "early", _words(text, 9))
    if m := _SPELLING.match(text):
        spelling = m.group("x").replace("aus/", "Australian/").replace("aus ", "Australian ")
        words = " ".join(w if w.isupper() else w.capitalize() for w in spelling.split()[:-1])
        rule = f"Use {words} {spelling.split()[-1].lower()}"
        return Said(MemoryType.FEEDBACK, f"{rule} in code, comments and docs", "spelling", rule)
    if m := _ACCOUNT.match(text):
        return Said(MemoryType.USER, f"The user's {m.group('what')} is {m.group('x')}", "account")
    return None


__all__ = ["Said", "said"]
