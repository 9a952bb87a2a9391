"""Project facts a user tells in passing: where a service runs, where work items are tracked,
where a related repository is checked out.

Users rarely say "remember that the database runs from /srv/pg" — they say "siyuan runs from
<dir> with its data mounted from <dir>" while asking for something else, or "create a story for
that in Azure DevOps". A colleague keeps both: the first saves searching the machine next time,
the second says where "ticket 5094" lives when the next session names only its number.

Each function reads one sentence and returns a :class:`Told` (name, description, **How to
apply:**) or None; :func:`memdir.extract.rules.classify` turns it into a candidate. Both keep
the reference's form: the name and the description say the fact in general words — a path is
named ``<path 1>`` there and written out only in the body (paths are one machine's, and a
description is read on every prompt) — and **How to apply:** says when to use it.

Precision first: a location needs a verb that says where something *lives* (runs from, is
installed in, is mounted from, lives in, is stored in), an absolute path that is not a temp dir,
and no question or negation; a tracker needs its name next to a work-item word (story, ticket,
task, bug, issue, work item, epic) in a sentence that asks for or names one, never a negation —
or one of its work items named by link (a Linear, Jira, Azure DevOps or ClickUp item URL) or by
key right after the tracker's name ("linear ENT-53").
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Told:
    name: str
    description: str
    how: str
    why: str
    body: str | None = None  # the fact written out (paths included), when it differs


_PATH = re.compile(r"(?<![\w.])(?:~|/)[\w.-]+(?:/[\w.@-]+)+/?")
_TEMP = re.compile(r"^/(?:tmp|var/folders|private/tmp|var/tmp)/|^/proc/|^/dev/")
_LIVES = re.compile(
    r"^(?:the\s+|our\s+|my\s+)?(?P<what>[a-z][\w.-]*(?:\s+[a-z][\w.-]*){0,3}?)\s+"
    r"(?:runs|is running|lives|is installed|is deployed|is hosted|is mounted|is stored|are stored|"
    r"is checked out|is cloned)\s+(?:from|in|at|under|on)\s+(?P<where>(?:~|/)\S+)(?P<rest>.*)$",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no longer|never|isn't|doesn't|don't|wasn't|won't)\b", re.I)
_WHAT_STOP = frozenset({"it", "this", "that", "which", "what", "there", "he", "she", "they", "who"})


def location(sentence: str) -> Told | None:
    """ "<thing> runs from <absolute path> …" as a project fact about this machine."""
    text = sentence.strip().rstrip(".!")
    m = _LIVES.match(text)
    if m is None or text.endswith("?") or _NEGATION.search(text):
        return None
    what = m.group("what").strip()
    if what.split()[0].lower() in _WHAT_STOP:
        return None
    paths = _PATH.findall(text)
    if not paths or any(_TEMP.match(p) for p in paths):
        return None
    general = text
    for n, path in enumerate(dict.fromkeys(paths), start=1):
        general = general.replace(path, f"<path {n}>")
    return Told(
        name=f"Where {what} runs and keeps its files",
        description=f"{general[0].upper()}{general[1:]} (the paths are in the body)",
        how=f"When work needs {what} (deploying to it, restarting it, reading its logs or data), "
        "use these paths instead of searching the machine for them; if one no longer exists, "
        "ask the user where it moved.",
        why="the user told where it lives on this machine, so nobody has to search for it",
        body=f"{text[0].upper()}{text[1:]}",
    )


_TRACKERS = {
    "azure devops": ("Azure DevOps", "the `az boards` CLI or the Azure DevOps tools"),
    "ado": ("Azure DevOps", "the `az boards` CLI or the Azure DevOps tools"),
    "jira": ("Jira", "the Jira CLI or tools"),
    "linear": ("Linear", "the Linear tools"),
    "youtrack": ("YouTrack", "the YouTrack tools"),
    "github issues": ("GitHub Issues", "`gh issue`"),
    "github issue": ("GitHub Issues", "`gh issue`"),
    "gitlab issues": ("GitLab Issues", "`glab issue`"),
    "trello": ("Trello", "the Trello tools"),
    "asana": ("Asana", "the Asana tools"),
    "clickup": ("ClickUp", "the ClickUp tools"),
}
_CASED = {"ado": "ADO", "linear": "Linear", "asana": "Asana", "trello": "Trello"}
_TRACKER = re.compile(r"\b(?P<t>" + "|".join(_TRACKERS) + r")\b", re.IGNORECASE)
_ITEM = re.compile(
    r"\b(?:(?:user )?stor(?:y|ies)|tickets?|tasks?|bugs?|issues?|work[- ]items?|epics?|cards?)\b",
    re.IGNORECASE,
)
# "in Jira", "Jira story 12", "story 12 in ADO", "create a ticket in Linear": the item and the
# tracker close together, not "jira" somewhere in a long sentence.
_NEAR = 40


# A link to one work item names its tracker whatever the sentence says around it ("have a look
# at this first https://linear.app/acme/issue/ENT-250/…").
_ITEM_URLS = (
    (re.compile(r"https?://linear\.app/[\w-]+/issue/[A-Z][A-Z0-9]*-\d+"), "linear"),
    (re.compile(r"https?://[\w-]+\.atlassian\.net/browse/[A-Z][A-Z0-9]*-\d+"), "jira"),
    (re.compile(r"https?://dev\.azure\.com/[\w.-]+/[^\s/]+/_workitems/edit/\d+"), "azure devops"),
    (re.compile(r"https?://app\.clickup\.com/t/\w+"), "clickup"),
)
# "brainstorm: linear ent-53", "a comment in Jira OPS-12": the tracker named with one item's key
_KEYED = re.compile(
    r"\b(?P<t>linear|jira|ado|youtrack)\s+#?(?:[a-z][a-z0-9]*-\d+|\d{2,})\b", re.IGNORECASE
)
# "log a linear bug", "open an ado ticket": typed in lower case, the name still means the tracker
# when it is the work item's own modifier right after a verb that files one.
_FILED = re.compile(
    r"\b(?:log|file|create|open|raise|make|add)\s+(?:a|an|the|new|a new)\s+"
    r"(?P<t>linear|ado|asana|trello)\s+(?:bug|issue|ticket|task|story|card)s?\b",
    re.IGNORECASE,
)


def _tracker_named(text: str) -> str | None:
    """The tracker ``text`` asks for or names one work item in, or None."""
    for pattern, tracker_key in _ITEM_URLS:
        if pattern.search(text):
            return tracker_key
    if keyed := _KEYED.search(text):
        return keyed.group("t").lower()
    if text.endswith("?") or _NEGATION.search(text) or re.search(r"\bor\b", text, re.I):
        return None  # "Jira or GitHub?" is a choice not yet made
    if m := _FILED.search(text):
        return m.group("t").lower()
    m = _TRACKER.search(text)
    if m is None or len({x.group("t").lower() for x in _TRACKER.finditer(text)}) > 1:
        return None
    if m.group("t").lower() in _CASED and m.group("t") not in _CASED.values():
        return None  # "ado", "linear" as plain words: only their proper names count
    item = next((i for i in _ITEM.finditer(text) if abs(i.start() - m.start()) <= _NEAR), None)
    return m.group("t").lower() if item is not None else None


def tracker(sentence: str) -> Told | None:
    """ "create a story for that in Azure DevOps" as where this project tracks its work."""
    found = _tracker_named(sentence.strip())
    if found is None:
        return None
    name, tool = _TRACKERS[found]
    return Told(
        name=f"Work items are tracked in {name}",
        description=f"This project's stories, tasks and tickets live in {name}: look up and "
        "create work items there",
        how=f"When the user names a story, ticket or task (often only by its number), fetch it "
        f"from {name} with {tool} before starting; file new work items there, not in a file "
        "in the repository.",
        why=f"the user asks for work by its {name} item",
    )


_HOSTS = {
    "vercel.app": "Vercel",
    "netlify.app": "Netlify",
    "herokuapp.com": "Heroku",
    "fly.dev": "Fly.io",
    "pages.dev": "Cloudflare Pages",
    "onrender.com": "Render",
    "up.railway.app": "Railway",
    "web.app": "Firebase Hosting",
    "firebaseapp.com": "Firebase Hosting",
    "github.io": "GitHub Pages",
}
_LIVE_URL = re.compile(
    r"https?://(?P<host>[a-z0-9][\w-]*(?:\.[\w-]+)*?\.(?P<suffix>"
    + "|".join(re.escape(h) for h in _HOSTS)
    + r"))\b/?",
    re.IGNORECASE,
)
# a preview deployment ("app-git-feat-x-team.vercel.app", "app-4fj2k9x1a-team.vercel.app") lives
# as long as its branch: only the production host is worth keeping
_PREVIEW = re.compile(r"-git-|-[a-z0-9]{9}-[\w-]+\.vercel\.app$", re.IGNORECASE)


_LIVE_CUE = re.compile(
    r"\b(?:live|deployed|deploy|production|prod|hosted|check|open|test|verify|try)\b", re.I
)


def deployed(sentence: str) -> Told | None:
    """A link to the app's live host on a hosting service ("check it on
    https://acme.vercel.app") as where the project is deployed."""
    m = _LIVE_URL.search(sentence)
    if m is None or _PREVIEW.search(m.group("host")) or _NEGATION.search(sentence):
        return None
    if sentence[: m.start()].endswith("](") or len(sentence.split()) > 30:
        return None  # a link in a pasted page ("[AI Catalog specification](https://…)")
    if not _LIVE_CUE.search(sentence):
        return None  # a link named in passing is not "our app runs here"
    service = _HOSTS[m.group("suffix").lower()]
    url = f"https://{m.group('host').lower()}"
    if m.group("suffix").lower() == "github.io":  # the user's pages host: the app is a path
        page = re.match(r"[\w.-]+", sentence[m.end() :])
        if page is None:
            return None
        url += f"/{page.group(0)}"
    return Told(
        name="Where the live app is deployed",
        description=f"The live app runs on {service} at {url}",
        how=f"To check a change in production, open {url} after the {service} deployment has "
        "finished; test locally first, and ask before changing the production setup.",
        why="the user pointed at the live deployment to check the work there",
    )


# "entire backend is in ../entiredb": the other half of the system, checked out beside this
# one. Claude Code's own model saved exactly this from a held-out git-sync session; a colleague
# would too — it is where to read the other side of an API instead of guessing it.
_SIBLING = re.compile(
    r"^(?:the\s+|our\s+)?(?P<what>[a-z][\w.-]*(?:\s+[a-z][\w.-]*){0,2}?)\s+"
    r"(?:is|are|lives|live|sits|is checked out|is cloned)\s+(?:in|at|under)\s+"
    r"(?P<where>\.\./[\w.-]+(?:/[\w.-]+)?)/?$",
    re.IGNORECASE,
)
_COMPONENT = frozenset({
    "backend", "frontend", "server", "client", "api", "sdk", "cli", "app", "web", "website",
    "docs", "infra", "infrastructure", "repo", "repository", "service", "services", "library",
    "lib", "ui", "mobile", "worker", "workers", "plugin", "code", "project", "monorepo", "engine",
})  # fmt: skip


def sibling(sentence: str) -> Told | None:
    """ "<component> is in ../<dir>" as where a related repository is checked out."""
    text = sentence.strip().rstrip(".!")
    m = _SIBLING.match(text)
    if m is None or _NEGATION.search(text):
        return None
    what, where = m.group("what").strip(), m.group("where")
    words = what.lower().split()
    if words[0] in _WHAT_STOP or words[-1] not in _COMPONENT:
        return None  # "the bug is in ../lib/a.go" is this task's, not where a project lives
    return Told(
        name=f"Where the {what} is checked out",
        description=f"The {what} is a separate checkout beside this repository, at {where}",
        how=f"When work touches the {what} (the other side of an API, a schema, a bug on its "
        f"side), read its code at {where} instead of guessing; change it only when asked.",
        why=f"the user said where the {what} lives relative to this repository",
    )
