"""What a request asks to *do*, as a class of task, for requests that share no word with a memory.

"Bring lodash into the console", "get black onto my machine" and "pull in a YAML parser" all add a
dependency, yet none says "dependency", "package" or "install": a word-for-word match against a
memory's ``applies_when`` situations ("adding, installing … a dependency, package, library")
misses them. An :class:`Intent` names one such class of task the way coding requests phrase it
(verb phrases and the nouns of the family) and the words a situation governing it uses. A request
that matches an intent reaches every situation that names the class, whoever wrote the situation
(the offline rules, a model or a person), because the link is made of ordinary words.

Invariants:
- Patterns are written from how tasks of each class are asked in general (package managers,
  deletion, deployment, tests …), not from any evaluation item; each is anchored on word
  boundaries, and an action that is harmless without its object ("remove duplicates from a
  list") needs a destructive object ("remove the stale branches", "wipe the database").
- Matching is a few regex searches over the prompt's first ``MAX_QUERY_CHARS`` characters (the
  hook's budget): no model, no index.
- An intent is evidence only together with a situation that names it: the relevance rule
  (``EvidenceRule.intent_prior``) still asks for some similarity, and ``--explain`` quotes the
  request's words that fired the intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class Intent:
    """A class of task: how requests ask for it and what situations governing it say."""

    name: str  # shown in --explain: "adding a dependency"
    words: str  # what situations governing it say: added to the ranking's query at a low weight
    request: re.Pattern[str]
    situation: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class IntentHit:
    """An intent a request matched, with the request's words that matched it."""

    intent: Intent
    cue: str

    def describe(self) -> str:
        return f"{self.intent.name} ({self.cue!r})"


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_GAP = r"(?:\s+[\w.@/+#'-]+){0,4}?"  # up to four words between a verb and its particle
_DESTRUCTIVE_OBJECT = (
    r"branch(?:es)?|tags?|refs?|history|commits?|data(?:base)?s?|db|tables?|rows?|records?|"
    r"files?|folders?|director(?:y|ies)|buckets?|volumes?|environments?|env|cluster|servers?|"
    r"instances?|accounts?|users?|customers?|everything|all|schema|index(?:es)?|queues?|"
    r"cache|backups?|logs?|images?|containers?|namespaces?|deployments?|releases?"
)

INTENTS: tuple[Intent, ...] = (
    Intent(
        "adding a dependency",
        "dependency package library install",
        _re(
            r"\b(?:install|reinstall|uninstall|vendor|upgrade|downgrade)\w*\b|"
            rf"\b(?:bring|pull|drag)\b{_GAP}\s+(?:in|into|onto)\b|"
            r"\b(?:get|grab|put|load)(?:\s+[\w.@/+#'-]+){1,3}?\s+(?:into|onto)\b|"
            r"\b(?:add|use|adopt|include|switch to|try|need|want|pick|choose|recommend)\b"
            r"(?:\s+[\w.@/+#'-]+){0,3}?\s+(?:librar(?:y|ies)|packages?|dependenc(?:y|ies)|"
            r"plugins?|modules?|sdks?|frameworks?|gems?|crates?|pods?|extensions?|tools?|"
            r"linters?|formatters?|parsers?|clients?)\b|"
            r"\b(?:dependenc(?:y|ies)|third[- ]party|lock ?file)\b"
        ),
        _re(r"dependenc|packages?\b|librar|install|vendor|plugin"),
    ),
    Intent(
        "deleting or resetting something",
        "deleting removing wiping resetting",
        _re(
            r"\b(?:delet\w*|remov\w*|drop|dropping|wip(?:e|ing)|eras(?:e|ing)|purg(?:e|ing)|"
            r"prun(?:e|ing)|truncat\w*|destroy\w*|nuke|reset\w*|clean(?:ing)?\s*up|clear|"
            r"tear\s+down|get rid of|rm\s+-rf|overwrit\w*|squash|rewrit\w*)\b"
            rf"{_GAP}\s+(?:the\s+|our\s+|all\s+|every\s+|old\s+|stale\s+)?"
            rf"(?:\w+\s+)?(?:{_DESTRUCTIVE_OBJECT})\b|"
            r"\b(?:rm\s+-rf|force[- ]push\w*|drop\s+table|migrate:fresh|db:wipe)\b"
        ),
        _re(
            r"delet|remov|drop|wip(e|ing)|eras|purg|prun|truncat|destr|reset|clean(ing)? up|"
            r"rewrit|irreversib|force-push"
        ),
    ),
    Intent(
        "deploying or releasing",
        "deploying releasing",
        _re(
            r"\b(?:deploy\w*|ship(?:s|ped|ping)?|releas\w*|roll(?:ing)?\s*out|rollout|"
            r"publish\w*|go(?:es|ing)?\s+live|hotfix\w*|submit\w*|cut\s+a\s+(?:new\s+)?"
            r"(?:version|tag)|push\w*(?:\s+\w+){0,3}\s+to\s+(?:prod\w*|staging|live))\b"
        ),
        _re(r"deploy|releas|shipping|rollout|publish|submi|hotfix"),
    ),
    Intent(
        "writing or running tests",
        "tests fixtures samples",
        _re(
            r"\b(?:tests?|testing|unit[- ]level|specs?|coverage|assert\w*|fixtures?|mocks|"
            r"stubs?|seed\w*|samples?|test data|suites?)\b"
        ),
        _re(r"\btests?\b|test suites|fixtures|mocks|seed data|samples"),
    ),
    Intent(
        "speeding up slow code",
        "slow performance",
        _re(
            r"\b(?:slow\w*|faster|speed\w*\s+up|speedup|sluggish|lag\w*|"
            r"takes\s+(?:forever|ages|too long)|timing\s+out|times?\s+out|latency|"
            r"performance|perf|optimi[sz]\w*|bottleneck\w*|hang(?:s|ing)?)\b"
        ),
        _re(r"\bslow\b|faster|performance|optimi[sz]|latency|profil"),
    ),
    Intent(
        "investigating a failure in a running system",
        "crashes errors alerts incidents",
        _re(
            r"\b(?:crash\w*|(?:is|are|was|went|goes)\s+down|outage\w*|broken|fail(?:s|ed|ing|ure)?|"
            r"errors?\s+(?:rate|spike)|alerts?|paged|incident\w*|stalled|"
            r"not\s+(?:working|arriving|sending|running)|500s?)\b"
        ),
        _re(r"crash|outage|incident|alert|error|failure|stuck|monitor|dashboard"),
    ),
    Intent(
        "querying or changing stored data",
        "database queries",
        _re(
            r"\b(?:quer(?:y|ies|ying)|select|"
            r"columns?|tables?|rows?|records|schema|migrat\w*|backfill\w*|"
            r"sql)\b"
        ),
        _re(r"database|\bsql\b|queries|querying|schema|migrations?"),
    ),
    Intent(
        "building user interface",
        "UI components",
        _re(
            r"\b(?:(?:an?|the|this|that|my|our|login|sign-?up|contact|checkout|search|"
            r"registration|settings|edit|web)\s+form|"
            r"(?<!big\s)screens?|pages?|views?|buttons?|forms|modals?|dialogs?|dropdowns?|"
            r"menus?|toggles?|widgets?|components?|layouts?|"
            r"tabs?|sidebars?|navbar|header|footer|tooltips?|icons?|"
            r"animation\w*)\b"
        ),
        _re(r"\bui\b|pages|screens|components|widgets|buttons|forms|design|layout"),
    ),
    Intent(
        "showing text to users",
        "user-facing text labels",
        _re(r"\b(?:labels?|wording|captions?|placeholder\s+text|user[- ]facing|tooltips?)\b"),
        _re(r"user-facing|labels|translations?|wording"),
    ),
    Intent(
        "scheduling recurring jobs",
        "scheduling nightly",
        _re(
            r"\b(?:every\s+(?:night|hour|\d+\s*(?:minutes|hours))|nightly|hourly|cron\w*|"
            r"schedul(?:e|ing)\s+(?:it|this|that|the|a|an)\b|recurring\s+(?:jobs?|tasks?|runs?)|"
            r"periodic\w*)\b"
        ),
        _re(r"schedul|recurring|nightly|periodic|cron"),
    ),
    Intent(
        "logging and debugging output",
        "logging debugging",
        _re(
            r"\b(?:log(?:s|ging)?|print\w*|dump\w*|debug\w*|trace\w*|stdout|stderr|"
            r"verbose)\b"
        ),
        _re(r"logging|printing|dumping|debugging|\blogs?\b"),
    ),
    Intent(
        "calling external services",
        "external APIs HTTP",
        _re(
            r"\b(?:call(?:ing)?|hit(?:ting)?|fetch\w*|request\w*|post(?:ing)?\s+to|"
            r"integrat\w*\s+with)\s+(?:\w+\s+){0,3}?(?:api|apis|endpoint|service|"
            r"webhook|url)s?\b|\bwebhooks?\b"
        ),
        _re(r"external apis|http|webhooks|callbacks"),
    ),
    Intent(
        "sending messages to people",
        "email notifications",
        _re(
            r"\b(?:send\w*|email\w*|mail\w*|notify\w*|remind\w*|blast\w*)\b"
            r"(?:\s+[\w'-]+){0,4}?\s+(?:emails?|mails?|newsletters?|reminders?|"
            r"notifications?|customers?|users?|subscribers?|everyone|them)\b|"
            r"\b(?:newsletters?|notifications?|mailings?)\b"
        ),
        _re(r"e-?mail|mailings|newsletters|reminders|notifications"),
    ),
    Intent(
        "handling errors and failures in code",
        "errors exceptions",
        _re(
            r"\b(?:handl\w*|catch\w*|deal\w*\s+with|retr(?:y|ies|ying))\s+"
            r"(?:[\w'-]+\s+){0,4}?(?:errors?|exceptions?|failures?|timeouts?|case|cases)\b|"
            r"\b(?:raise|throw)\s+(?:an?\s+)?(?:error|exception)\b"
        ),
        _re(r"errors|exceptions|failures"),
    ),
    Intent(
        "silencing checker or linter warnings",
        "warnings linters type checking",
        _re(
            r"\b(?:silenc\w*|suppress\w*|mute|ignor\w*|disabl\w*)\s+(?:[\w'-]+\s+){0,4}?"
            r"(?:warnings?|complaints?|errors?|rules?|checks?|lint\w*)\b|"
            r"\b(?:nolint|noqa|type:\s*ignore|eslint-disable)\b"
        ),
        _re(r"linters|warnings|checker|type checking"),
    ),
    Intent(
        "handling people's personal data",
        "personal data customers",
        _re(
            r"\b(?:customer|user|subscriber|client|patient|employee)s?'?s?\s+"
            r"(?:address\w*|emails?|names?|phone\s+numbers?|birthdays?|details|data|records)\b|"
            r"\b(?:personal\s+data|real\s+(?:customer|user|subscriber)s?)\b"
        ),
        _re(r"personal data|customer data|privacy"),
    ),
    Intent(
        "shaping a reply: summaries, length and tone",
        "replies answers",
        _re(r"\b(?:summari[sz]e|summary|tl;?dr|recap|in\s+short|briefly)\b"),
        _re(r"writing replies|answers|replies"),
    ),
    Intent(
        "touching production",
        "production live",
        _re(
            r"\b(?:(?:on|in|against|from|check|hit|query)\s+(?:the\s+)?(?:prod|production|live)|"
            r"(?:prod|production|live)\s+(?:data(?:base)?|db|servers?|site|system|"
            r"environment|cluster|records|users))\b"
        ),
        _re(r"production|\bprod\b|\blive\b"),
    ),
    Intent(
        "changing infrastructure or cluster configuration",
        "cluster infrastructure",
        _re(
            r"\b(?:scale\w*|replicas?|pods?|cluster\w*|instances?|capacity|"
            r"autoscal\w*|provision\w*|infra\w*|config\s*maps?|ingress|load\s+balancer)\b"
        ),
        _re(r"cluster|infrastructure|scaling|replicas|pods"),
    ),
    Intent(
        "running long or heavy jobs",
        "training jobs GPU",
        _re(
            r"\b(?:train(?:s|ing)?\s+(?:[\w-]+\s+){0,2}?(?:models?|networks?|classifiers?|"
            r"runs?|jobs?)|training\s+(?:runs?|jobs?|scripts?|loops?)|sweeps?|gpus?|"
            r"batch\s+jobs?|long[- ]running|experiments?)\b"
        ),
        _re(r"training|gpu|\bjobs\b|cluster|experiments|batch"),
    ),
    Intent(
        "storing or sharing files and artifacts",
        "storing sharing artifacts",
        _re(r"\b(?:upload\w*|storing|archiv\w*|buckets?|artifacts?|datasets?)\b"),
        _re(r"storing|sharing|uploads?|artifacts|files|datasets|checkpoints|weights"),
    ),
)


# A task is stated in a prompt's opening; a pasted log or file after it must not cost the hook
# (the patterns cost about 3 µs per character together).
MAX_QUERY_CHARS = 600


@lru_cache(maxsize=64)  # ranking and the relevance evidence ask for the same prompt
def request_intents(query: str) -> tuple[IntentHit, ...]:
    """The intents ``query`` asks for, each with the words of the request that matched."""
    head = query[:MAX_QUERY_CHARS]
    hits = []
    for intent in INTENTS:
        found = intent.request.search(head)
        if found:
            hits.append(IntentHit(intent, " ".join(found.group(0).split())))
    return tuple(hits)


def situation_names(situation: str, hits: tuple[IntentHit, ...]) -> IntentHit | None:
    """The first of ``hits`` whose class ``situation`` names, or None."""
    for hit in hits:
        if hit.intent.situation.search(situation):
            return hit
    return None


__all__ = ["INTENTS", "Intent", "IntentHit", "request_intents", "situation_names"]
