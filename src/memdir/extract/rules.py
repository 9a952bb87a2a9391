"""Rule-based recognition of explicit memory statements in user messages (the offline default).

Invariant: :func:`classify` is a pure function of one sentence and today's date; it returns a
:class:`Candidate` only for a sentence that *explicitly* asks to remember or forget something,
states a standing instruction, corrects the agent, says who the user is, or says where something
is tracked — and ``None`` otherwise. Precision is preferred over recall: a missed memory can be
saved later by asking, a wrong one pollutes every future prompt.

Honest limits (what only the LLM extractor can do):

* It sees one sentence at a time, in English (Chinese: :mod:`memdir.extract.chinese`); it cannot
  resolve "that" or "it" to what was said earlier, so vague statements ("don't do that again")
  are dropped rather than guessed at.
* It cannot tell a standing rule from a one-off instruction except by cue words ("from now on",
  "always", "never") and a list of one-off markers ("for now", "this time", "yet", ...);
  "never push to main" is saved, "stop the server" is not, "stop adding comments" is.
* Types are inferred from surface cues (URLs and trackers → reference, "I'm a…" → user,
  imperatives → feedback, other facts → project) and can be wrong.
* The Why/How-to-apply lines are the user's own "because…" clause when there is one, otherwise a
  plain note that the user said it; rules cannot infer motivation.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from typing import Literal

from memdir.extract import chinese, standing, told
from memdir.extract.documents import injected_document, outlives_brief, task_brief
from memdir.model import MemoryType
from memdir.script import contains_cjk, printable, word_count

Kind = Literal["save", "forget"]


@dataclass(frozen=True, slots=True)
class Candidate:
    kind: Kind
    type: MemoryType | None  # None for "forget"
    statement: str  # what to save (third person for user facts), or what to forget
    why: str | None
    rule: str  # which rule fired, for debugging and tests
    source: str  # the sentence as written
    # The reference's form (memdir.extract.form) fills what a rule leaves out: the name from the
    # statement, How to apply from its trigger or object, the evidence from the source.
    name: str | None = None  # the rule as a title, in general words
    how: str | None = None  # **How to apply:** — when, where, which command
    evidence: str | None = None  # this session's evidence, one line for the body's **Why:**
    fact: str | None = None  # the body's first line when the description abbreviates it


_F = re.IGNORECASE
_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|but|btw|by the way|hey|hi|oh|well|one more thing|one thing|"
    r"important|note to self)[,:;!\s-]+)+",
    _F,
)
_REQUEST = r"(?:(?:please|pls|can you|could you|would you|will you|i want you to|i'd like you to|" \
    r"i would like you to|you should|make sure to|be sure to)\s+)*"  # fmt: skip
_REMEMBER = re.compile(
    rf"^{_REQUEST}(?:remember|memori[sz]e|keep in mind|make a note|take note|don't forget|"
    r"do not forget|never forget|save (?:a|this as a|this to) memory)\b(?:\s+(?:that|this|of)\b)?"
    r"[\s:,-]*(?P<x>.+)$",
    _F,
)
_RECALL_QUESTION = re.compile(
    r"^(?:do|did|can|could|would|will)\s+you\s+(?:still\s+)?(?:remember|recall)\s+"
    r"(?:what|how|where|why|which|who|when|if|whether)\b|^(?:do|did)\s+you\s+remember\b|"
    r"^remember\s+(?:when|what|how|where|why|which|who|if|whether)\b",
    _F,
)
# "remember the fix you just applied": what it points at is in the conversation, not the sentence
_DEICTIC = re.compile(
    r"\b(?:you|we|i) (?:just|already) \w+|\bwhat (?:you|we) (?:did|said|found|wrote)\b|"
    r"\b(?:the|this|that) (?:fix|change|solution|approach|thing|step|trick)s? (?:you|we) "
    r"(?:just |already )?(?:did|made|applied|used|wrote|found|tried)\b",
    _F,
)
_FORGET = re.compile(
    rf"^{_REQUEST}(?:forget|stop remembering|(?:delete|remove|drop) (?:the |your |that )?memor"
    r"(?:y|ies) (?:about|of|that|saying))\s+(?:about\s+|that\s+|the fact that\s+|"
    r"what i said about\s+|everything about\s+)?(?P<x>.+)$",
    _F,
)
_FROM_NOW = re.compile(
    r"^(?:from now on|going forward|moving forward|in (?:the )?future|henceforth|"
    r"from here on(?: out)?)[,:]?\s+(?P<x>.+)$|^(?P<y>.+?),?\s+(?:from now on|going forward)[.!]?$",
    _F,
)
_CORRECTION = re.compile(
    r"^(?:no|nope|wrong)\s*[,.!:;—–-]+\s*(?P<x>(?:use|we use|it's|it is|do|don't|do not|prefer|"
    r"always|never|that's|the)\b.+)$|"
    r"^(?:that's|that is|this is|you're|you are)\s+(?:wrong|incorrect|not right|not correct|"
    r"mistaken)[,.;:!—-]+\s*(?!\s*(?:i|we)\s+(?:can|could|see|saw|have|had|just|also|still|"
    r"do|did)\b)(?P<y>.+)$",  # "that is wrong, I can also see X": what they see, not a rule
    _F,
)
_CONTRAST = re.compile(
    r"^(?:please\s+)?(?:use|prefer|pick|choose)\s+(?P<a>.+?),?\s+(?:instead of|rather than|not|"
    r"over|(?:and\s+)?(?:don't|dont|do not|never)\s+use)\s+(?P<b>.+)$",
    _F,
)
_DIRECTIVE = re.compile(
    r"^(?:please\s+|you should\s+|you must\s+|we\s+)?"
    r"(?P<cue>always|never|don't|dont|do not|avoid|stop)\s+(?P<x>.+)$",
    _F,
)
# "start adding a version number each time": a habit from now on, like "stop adding comments"
_START = re.compile(r"^(?:please\s+|and\s+|also\s+)?start\s+(?P<x>\w+ing\b.+)$", _F)
_MAKE_SURE = re.compile(
    r"^(?:please\s+|and\s+)?(?:make sure|be sure|ensure)(?:\s+that|\s+to)?\s+(?P<x>.+)$", _F
)
# "make sure" is a standing rule only about something that recurs: a process, not this one change
_RECURRING = re.compile(
    r"\b(?:every|each|whenever|always|before|after|handoffs?|commits?|push(?:es|ing)?|releases?|"
    r"deploy(?:s|ments?)?|sessions?|pull requests?|prs?|(?:code |pr )reviews?|reviews|"
    r"migrations?)\b",
    _F,
)
# "don't X" said once is this task's instruction ("do not commit anything", "don't bump
# version") unless it chooses a tool or resource ("don't use playwright to browse"), recurs
# ("don't push before the tests pass"), lasts ("ever", "anymore") or gives its reason
_LASTING_DONT = re.compile(
    r"^(?:use|rely on|call|import|install)\b|\b(?:every|each|whenever|ever|anymore|any more|again|"
    r"before|after|without asking|unless)\b|\bin (?:\w+ ){0,2}(?:tests?|specs?|production|prod|"
    r"ci|code|docs?|commits?|prs?|pull requests?|migrations?|this (?:repo|repository|project|"
    r"codebase))\b",
    _F,
)
# A requirement stated about the product ("conversations must be guided", "latency is critical"):
# a project fact. The subject must be a thing, not a pronoun — "it must work" says nothing later.
_REQUIREMENT = re.compile(
    r"^(?:critically|importantly|crucially)?[,\s]*(?P<subj>(?:the |our |all |every |each )?"
    r"[a-z][\w/-]*(?: [a-z][\w/-]*){0,3})\s+(?:must(?: always| never)?|(?:is|are) "
    r"(?:paramount|critical|essential|crucial|non-negotiable))\b(?P<x>.*)$",
    _F,
)
_PRONOUN = re.compile(
    r"^(?:the )?(?:it|this|that|these|those|you|your|we|i|they|he|she|there|everything|something|"
    r"which|what|who)\b",
    _F,
)
# "local agents should be used before user agents whenever possible": a default, not one change
_SHOULD = re.compile(
    r"^(?P<subj>(?:the |our |all |every |each )?[a-z][\w/.-]*(?: [a-z][\w/.-]*){0,4})\s+should\s+"
    r"(?:always\s+)?(?P<x>.+?)\s*(?:,\s*)?(?P<when>whenever possible|wherever possible|by default|"
    r"at all times|every time|each time|always)[.!]*$",
    _F,
)
_PREFERENCE = re.compile(
    r"^i\s+(?:prefer|'d rather|would rather|like it when you)\s+(?P<x>.+)$", _F
)
_IDENTITY = re.compile(
    r"^(?:i'm|i am)\s+(?P<role>(?:a|an|the)\s+.+|new to .+|familiar with .+|an expert (?:in|on|at) "
    r".+|experienced (?:in|with) .+|responsible for .+|in charge of .+)$|"
    r"^my (?:role|job|title|position) (?:is|here is)\s+(?P<mine>.+)$|"
    r"^i work (?:on|at|for|in|as|with)\s+(?P<work>.+)$|"
    r"^i(?:'ve| have) been (?P<been>(?:writing|using|doing|working (?:with|on)|coding in) "
    r".+ for .+)$",
    _F,
)
_REFERENCE = re.compile(
    r"^(?P<what>.+?)\s+(?:is|are|lives|live|can be found|is tracked|are tracked|are filed|is "
    r"documented|are documented)\s+(?:at|in|on|under)\s+(?P<where>.+)$",
    _F,
)
_URL = re.compile(r"https?://\S+|\b[A-Z][A-Z0-9]+-\d+\b|#[a-z][\w-]+")
_REFERENCE_WORDS = re.compile(
    r"\b(?:dashboard|runbook|channel|wiki|board|grafana|jira|linear|slack|confluence|notion|"
    r"tracker|ticket|docs? site|spreadsheet)\b",
    _F,
)
_ONE_OFF = re.compile(
    r"\b(?:for now|this time|right now|yet|for this (?:task|pr|change|one|file|function)|today|"
    r"at the moment|until i say|just now|in this (?:file|function|pr|commit))\b",
    _F,
)
# "don't give it a number", "never merge this": a directive about the thing at hand (its object
# a pronoun), or "don't fix anything, but just validate it works" (this task's scope), is the
# current task's instruction, not a standing rule: a standing one names what it is about
_BUT_ONLY = re.compile(r",?\s+but\s+(?:just|only)\s+", _F)  # "…, but only this file"
_VAGUE = re.compile(
    r"^(?:do |touch |change |say |use )?(?:that|this|it|so|them|those)\b.{0,20}$", _F
)
_IDLE = re.compile(
    r"^(?:that|this|it|which|so|because|if|the same|"
    r"mind|worry|bother|know|understand|think|see|get it|care|have|need|want|remember|recall|"
    r"matter|sure|apologi[sz]e|be sorry)\b",
    _F,
)
_NOT_ROLE = re.compile(
    r"^(?:a|an|the)\s+(?:bit|little|lot|tad|sort|kind|idiot|moron|fool|fan of questions|"
    r"big fan)\b",
    _F,
)
_BECAUSE = re.compile(
    r"[,;]?\s+(?:because|since|as otherwise|so that|so(?=\s+(?:i|we|you|they)\s+(?:can|could|"
    r"know)\b))\s+"
    # "don't amend commits - it messes with the workflows": a dash, then what it does
    r"|\s+[-–—]+\s+(?=(?:it|that|this|they|which)(?:'s)?\s+\w)",
    _F,
)
_IMPERATIVE_START = re.compile(
    r"^(?:to\s+)?(?:always|never|don't|do not|use|prefer|avoid|stop|run|keep|make sure|put|add|"
    r"write|call|ask|check|send|commit|test|format|name)\b",
    _F,
)
_TRACKED = re.compile(r"\b(?:tracked|filed|documented)\b", _F)
_SELF = re.compile(r"^(?:i'm|i am|my|i work|i've|i have|i)\b", _F)
_LEAD_IN = re.compile(r":\s*(?:\(?\d+[.)]|[-*•])?\s*$")
MAX_RULE_WORDS = 40  # a standing rule is said in a sentence, not in a paragraph
# a sentence longer than this is pasted text (a log, a file), not something said to be kept: even
# "remember that …" before it would make a memory of the paste
MAX_SENTENCE_CHARS = 2_000
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


_words = word_count  # the rules' word count is the one CJK-aware count (memdir.script)


def _clean(text: str) -> str:
    return text.strip().strip("\"'“”").rstrip(" .!").strip()


def absolute_dates(text: str, today: dt.date) -> str:
    """Replace today/tomorrow/yesterday and weekday names with ISO dates (the next such day)."""
    offsets = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}

    def day(match: re.Match[str]) -> str:
        return (today + dt.timedelta(days=offsets[match.group(0).lower()])).isoformat()

    text = re.sub(r"\b(?:today|tonight|tomorrow|yesterday)\b", day, text, flags=_F)

    def weekday(match: re.Match[str]) -> str:
        target = _WEEKDAYS.index(match.group("d").lower())
        ahead = (target - today.weekday()) % 7 or 7
        return f"{match.group('p') or 'on '}{(today + dt.timedelta(days=ahead)).isoformat()}"

    pattern = rf"\b(?P<p>(?:on|by|this|next|until|before)\s+)?(?P<d>{'|'.join(_WEEKDAYS)})\b"
    text = re.sub(pattern, weekday, text, flags=_F)
    return re.sub(r"\b(?:this|next)\s+(?=\d{4}-)", "", text, flags=_F)


def third_person(text: str) -> str:
    """'I'm a data scientist on my team' -> 'User is a data scientist on their team'."""
    swaps = [
        (r"^(?:i'm|i am)\b", "User is"),
        (r"^my\b", "User's"),
        (r"^i(?:'ve| have)\b", "User has"),
        (r"^i work\b", "User works"),
        (r"^i (prefer|like|use|want|need|hate|know|own|lead|manage|maintain|run)\b", r"User \1s"),
        (r"^i\b", "User"),
        (r"\bi'm\b|\bi am\b", "they are"),
        (r"\bmy\b", "their"),
        (r"\bme\b", "them"),
        (r"\bi\b", "they"),
    ]
    for pattern, repl in swaps:
        text = re.sub(pattern, repl, text, flags=_F)
    return text


def infer_type(statement: str) -> MemoryType:
    if _URL.search(statement) or _REFERENCE_WORDS.search(statement):
        return MemoryType.REFERENCE
    if _SELF.match(statement):
        return MemoryType.USER
    if _IMPERATIVE_START.match(statement) or re.search(
        r"\b(?:instead of|rather than)\b", statement
    ):
        return MemoryType.FEEDBACK
    return MemoryType.PROJECT


def _split_why(text: str) -> tuple[str, str | None]:
    parts = _BECAUSE.split(text, maxsplit=1)
    if len(parts) == 2 and _words(parts[1]) >= 2:
        return _clean(parts[0]), _clean(parts[1])
    return _clean(text), None


def _save(type_: MemoryType, text: str, rule: str, source: str, today: dt.date) -> Candidate | None:
    statement, why = _split_why(absolute_dates(text, today))
    statement = (
        re.sub(r"^to\s+", "", statement, flags=_F) if type_ is MemoryType.FEEDBACK else statement
    )
    if type_ is MemoryType.USER:
        statement = third_person(statement)
    if _words(statement) < 2 or _VAGUE.match(statement):
        return None
    statement = statement[0].upper() + statement[1:]
    return Candidate("save", type_, statement, why, rule, source)


def classify(sentence: str, *, today: dt.date) -> Candidate | None:
    """The memory statement in ``sentence``, or None (see the module docstring for limits)."""
    source = sentence.strip()
    text = _FILLER.sub("", source).strip()
    if not text or _RECALL_QUESTION.match(text):
        return None
    if contains_cjk(text) and (in_chinese := chinese.said(text)):
        return _from_said(in_chinese, source, today)
    question = text.endswith("?")
    text = text.rstrip("?").strip()
    if m := _FORGET.match(text):
        target = _clean(m.group("x"))
        if _words(target) < 1 or _VAGUE.match(target) or re.fullmatch(r"(?:about )?it", target, _F):
            return None
        return Candidate("forget", None, target, None, "forget", source)
    if m := _REMEMBER.match(text):
        content = _clean(m.group("x"))
        if _words(content) < 3 or _DEICTIC.search(content):
            return None
        return _save(infer_type(content), content, "remember", source, today)
    if question:  # beyond "can you remember that…", a question is not a statement to keep
        return None
    if _LEAD_IN.search(text) or _words(text) > MAX_RULE_WORDS:
        return None  # the lead-in to a list the sentence does not hold, or a paragraph of thought
    if m := _FROM_NOW.match(text):
        content = _clean(m.group("x") or m.group("y"))
        kind = MemoryType.REFERENCE if _URL.search(content) else MemoryType.FEEDBACK
        return _save(kind, content, "from-now-on", source, today)
    if _ONE_OFF.search(text):
        return None
    if m := _CORRECTION.match(text):
        return _save(
            MemoryType.FEEDBACK, _clean(m.group("x") or m.group("y")), "correction", source, today
        )
    if m := _CONTRAST.match(text):
        content = f"Use {_clean(m.group('a'))} instead of {_clean(m.group('b'))}"
        return _save(MemoryType.FEEDBACK, content, "correction", source, today)
    if (m := _DIRECTIVE.match(text)) and not _IDLE.match(m.group("x")):
        cue = m.group("cue").lower().replace("dont", "don't")
        if cue == "stop" and not re.match(r"\w+ing\b", m.group("x")):
            return None  # "stop the server" is an action; "stop adding comments" is a habit
        if (
            _words(m.group("x")) < 2
            or _VAGUE.match(m.group("x"))
            or standing.AT_HAND.match(m.group("x"))
            or _BUT_ONLY.search(m.group("x"))
        ):
            return None
        lasting = _LASTING_DONT.search(m.group("x")) or _BECAUSE.search(text)
        if cue in ("don't", "do not", "avoid") and not lasting:
            return None  # "do not commit anything", "don't bump version": this task's
        return _save(MemoryType.FEEDBACK, f"{cue} {m.group('x')}", "directive", source, today)
    m = _START.match(text)
    if m and _RECURRING.search(m.group("x")) and not _VAGUE.match(m.group("x")):
        return _save(MemoryType.FEEDBACK, f"Keep {m.group('x')}", "start-habit", source, today)
    m = _MAKE_SURE.match(text)
    x = m.group("x") if m else ""
    if m and _RECURRING.search(x) and not _VAGUE.match(x) and not _PRONOUN.match(x):
        return _save(MemoryType.FEEDBACK, f"Make sure {m.group('x')}", "make-sure", source, today)
    m = _REQUIREMENT.match(text)
    if m and not _PRONOUN.match(m.group("subj")) and _words(text) >= 5:
        return _save(MemoryType.PROJECT, text, "requirement", source, today)
    m = _SHOULD.match(text)
    if m and not _PRONOUN.match(m.group("subj")) and _words(m.group("x")) >= 2:
        found = _save(MemoryType.FEEDBACK, text, "should-default", source, today)
        rule = _clean(f"{m.group('subj')} should {m.group('x')}").rstrip(",")
        rule = rule[0].upper() + rule[1:]
        how = (
            f"Make it the default: {rule[0].lower()}{rule[1:]}; when that is not possible, say why."
        )
        return replace(found, name=" ".join(rule.split()[:10]), how=how) if found else None
    if m := _PREFERENCE.match(text):
        return _save(
            MemoryType.FEEDBACK, f"Prefer {_clean(m.group('x'))}", "preference", source, today
        )
    if (m := _IDENTITY.match(text)) and not _NOT_ROLE.match(m.group("role") or ""):
        return _save(MemoryType.USER, text, "identity", source, today)
    m = _REFERENCE.match(text)
    if m and (_URL.search(m.group("where")) or _TRACKED.search(text)):
        return _save(MemoryType.REFERENCE, text, "reference", source, today)
    if fact := told.location(text):
        return _told(MemoryType.PROJECT, fact, "location", source)
    if fact := told.tracker(text):
        return _told(MemoryType.REFERENCE, fact, "tracker", source)
    if fact := told.deployed(text):
        return _told(MemoryType.REFERENCE, fact, "deployed", source)
    if fact := told.sibling(text):
        return _told(MemoryType.REFERENCE, fact, "sibling", source)
    if said_so := standing.said(text):
        return _from_said(said_so, source, today)
    return None


def _from_said(said: standing.Said, source: str, today: dt.date) -> Candidate | None:
    made = _save(said.type, said.statement, said.rule, source, today)
    if made is None:
        return None
    return replace(
        made, name=said.name or made.name, how=said.how or made.how, why=said.why or made.why
    )


def _told(type_: MemoryType, fact: told.Told, rule: str, source: str) -> Candidate:
    return Candidate(
        "save", type_, fact.description, fact.why, rule, source, name=fact.name, how=fact.how,
        fact=fact.body,
    )  # fmt: skip


# Users often type in lower case: a sentence may start with any letter (not after "e.g." etc.)
_SENTENCE = re.compile(
    r"(?<![ .]e\.g\.)(?<![ .]i\.e\.)(?<! vs\.)(?<=[.!?])\s+(?=[\"'“A-Za-z])|\n+|(?<=[。！？；])"
)
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_TAGGED = re.compile(r"<(?P<tag>[a-z][\w-]*)[^>]*>.*?</(?P=tag)>", re.DOTALL)


def sentences(text: str) -> list[str]:
    """Sentences of a user message, without code blocks, quoted lines or injected tagged blocks."""
    text = _TAGGED.sub("\n", _FENCE.sub("\n", text))
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith(">")]
    parts = _SENTENCE.split("\n".join(lines))
    return [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", p).strip() for p in parts if p and p.strip()]


def candidates(text: str, *, today: dt.date) -> list[Candidate]:
    """Every memory statement in one user message, in order."""
    text = printable(text)  # what is saved is shown on terminals and read back into prompts
    if injected_document(text):
        return []
    found = (classify(s, today=today) for s in sentences(text) if len(s) <= MAX_SENTENCE_CHARS)
    kept = [c for c in found if c is not None]
    if task_brief(text):
        kept = [c for c in kept if outlives_brief(c.rule)]
    return kept
