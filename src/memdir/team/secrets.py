"""Credential scanner for content bound for shared (team) memory.

Invariant: nothing in this module ever returns, logs or formats a matched secret. A
:class:`Finding` carries the rule id, a human label and a line number -- never the value --
so findings are safe to print, log, raise and send over the wire. :func:`redact` is the only
function that touches matched text, and it only removes it.

The 36 rules are the well-known public token formats of gitleaks' default configuration
(same rule ids), rewritten for Python's ``re``:

* Every pattern starts at a literal part of its token (the prefix; ``Q~`` or ``.atlasv1.``
  where the token starts with free characters, which look-behinds then check) so ``re`` can
  use its fast literal search; a leading ``\\b`` would disable that and cost a regex attempt
  at every character. The word boundary before a token is a fixed-width look-behind placed
  right after the prefix instead.
* The trailing gitleaks boundary (quote, backtick, whitespace, ``;``, a literal ``\\n``/``\\r``
  or end of text) is a look-ahead, so two tokens separated by one space are both found.
* Matching runs on UTF-8 bytes: ``bytes.lower()`` is ASCII-only, so keyword positions in the
  lower-cased copy line up with the original, and files are scanned without decoding.
* Prefilter: a rule with ``keywords`` runs its regex only at (or in a window around) the
  places where one of its lower-case keywords occurs -- gitleaks' keyword check, used for
  positions too. Rules whose regex starts with a case-sensitive literal get no keywords: ``re``
  already skips to that literal as fast as a substring search would (measured by
  ``benchmarks/secrets_bench.py``; probing pays off for case-insensitive and character-class
  prefixes, up to 15x).

A match is reported only if it is not a documentation placeholder: the per-rule entropy
thresholds and allowlists of gitleaks, in :mod:`memdir.team.placeholders`.

Sensitive prefixes are assembled at run time so this file does not look like a key to other
scanners, and so the scanner passes over its own source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import MemdirError, MemoryNotFoundError, NotRegularFileError
from memdir.pathsafe import read_regular
from memdir.team.placeholders import is_placeholder

REDACTED = "[REDACTED]"

# gitleaks' end-of-secret boundary, as a look-ahead.
_END = r"(?=[`'\"\s;]|\\[nr]|\Z)"
_WORD = "[0-9A-Za-z_]"


@dataclass(frozen=True, slots=True)
class Rule:
    """One credential format. With ``keywords`` (lower-case), the regex runs only where one
    occurs; without, the regex scans the whole text."""

    id: str
    label: str
    keywords: tuple[bytes, ...]
    regex: re.Pattern[bytes]
    back: int = 0  # the token starts this many chars before the regex match (look-behind)
    # None: every match starts exactly at a keyword occurrence (try the regex only there).
    # (before, after): a match lies within [k - before, k + after] of a keyword occurrence k.
    reach: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    """Where a credential was seen: rule and 1-based line. Deliberately holds no matched text."""

    rule_id: str
    label: str
    line: int


def _lead(prefix: str, width: int) -> str:
    """``prefix`` (matching exactly ``width`` chars) that must start at a word boundary."""
    return f"(?:{prefix})(?<!{_WORD}.{{{width}}})"


def _rule(
    rule_id: str,
    label: str,
    keywords: Iterable[str],
    pattern: str,
    flags: int = 0,
    *,
    back: int = 0,
    reach: tuple[int, int] | None = None,
) -> Rule:
    regex = re.compile(pattern.encode("ascii"), flags)
    return Rule(rule_id, label, tuple(k.encode("ascii") for k in keywords), regex, back, reach)


_ANT = "sk-" + "ant-"
_ANT_KEY = _ANT + "api03-"
_ANT_ADMIN = _ANT + "admin01-"
_OAI_MARK = "T3Blbk" + "FJ"
_B64 = "[A-Za-z0-9+/]"
_HEX = "[a-f0-9]"
_SLACK_NUM = "[0-9]{10,13}"

RULES: tuple[Rule, ...] = (
    _rule(
        "aws-access-token",
        "AWS access key",
        (),
        _lead("A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA", 4) + f"[A-Z2-7]{{16}}(?!{_WORD})",
    ),
    _rule("gcp-api-key", "GCP API key", (), _lead("AIza", 4) + "[A-Za-z0-9_-]{35}" + _END),
    _rule(
        "azure-ad-client-secret",
        "Azure AD client secret",
        (),
        # Starts at the literal 'Q~'; the 4 chars before it (and the delimiter or start of
        # text before those) are checked by look-behinds.
        r"Q~(?<=[0-9A-Za-z_~.]{3}[0-9]Q~)(?<![^\\'\"`\s>=:(,)][0-9A-Za-z_~.]{3}[0-9]Q~)"
        r"[0-9A-Za-z_~.-]{31,34}(?=[\\'\"`\s<),]|\Z)",
        back=4,
    ),
    _rule(
        "digitalocean-pat",
        "DigitalOcean personal access token",
        ("dop_v1_",),
        _lead("dop_v1_", 7) + f"{_HEX}{{64}}" + _END,
    ),
    _rule(
        "digitalocean-access-token",
        "DigitalOcean OAuth access token",
        ("doo_v1_",),
        _lead("doo_v1_", 7) + f"{_HEX}{{64}}" + _END,
    ),
    _rule(
        "anthropic-api-key",
        "Anthropic API key",
        (_ANT_KEY,),
        _lead(re.escape(_ANT_KEY), len(_ANT_KEY)) + "[A-Za-z0-9_-]{93}AA" + _END,
    ),
    _rule(
        "anthropic-admin-api-key",
        "Anthropic admin API key",
        (_ANT_ADMIN,),
        _lead(re.escape(_ANT_ADMIN), len(_ANT_ADMIN)) + "[A-Za-z0-9_-]{93}AA" + _END,
    ),
    _rule(
        "openai-api-key",
        "OpenAI API key",
        (_OAI_MARK.lower(),),
        "sk-(?<!" + _WORD + "sk-)(?:"
        f"(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{{74}}|[A-Za-z0-9_-]{{58}}){_OAI_MARK}"
        f"(?:[A-Za-z0-9_-]{{74}}|[A-Za-z0-9_-]{{58}})\\b"
        f"|[A-Za-z0-9]{{20}}{_OAI_MARK}[A-Za-z0-9]{{20}})" + _END,
        # The marker sits 23..85 chars into the token; the token ends <= 82 chars after it.
        reach=(85, 82 + 3),
    ),
    _rule(
        "huggingface-access-token",
        "Hugging Face access token",
        ("hf_",),
        _lead("hf_", 3) + "[a-z]{34}" + _END,
        re.IGNORECASE,
    ),
    _rule("github-pat", "GitHub personal access token", (), "ghp_[0-9a-zA-Z]{36}"),
    _rule(
        "github-fine-grained-pat",
        "GitHub fine-grained personal access token",
        ("github_pat_",),
        "github_pat_[0-9A-Za-z_]{82}",
    ),
    _rule("github-app-token", "GitHub app token", (), "gh[us]_[0-9a-zA-Z]{36}"),
    _rule("github-oauth", "GitHub OAuth access token", (), "gho_[0-9a-zA-Z]{36}"),
    _rule("github-refresh-token", "GitHub refresh token", (), "ghr_[0-9a-zA-Z]{36}"),
    _rule("gitlab-pat", "GitLab personal access token", (), "glpat-[0-9A-Za-z_-]{20}"),
    _rule("gitlab-deploy-token", "GitLab deploy token", (), "gldt-[0-9a-zA-Z_-]{20}"),
    _rule(
        "slack-bot-token",
        "Slack bot token",
        (),
        f"xoxb-{_SLACK_NUM}-{_SLACK_NUM}[a-zA-Z0-9-]*",
    ),
    _rule(
        "slack-user-token",
        "Slack user token",
        (),
        f"xox[pe](?:-{_SLACK_NUM}){{3}}-[a-zA-Z0-9-]{{28,34}}",
    ),
    _rule(
        "slack-app-token",
        "Slack app token",
        ("xapp",),
        r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+",
        re.IGNORECASE,
    ),
    _rule("twilio-api-key", "Twilio API key", (), "SK[0-9a-fA-F]{32}"),
    _rule(
        "sendgrid-api-token",
        "SendGrid API token",
        (),
        _lead(r"SG\.", 3) + "[a-zA-Z0-9=_.-]{66}" + _END,
    ),
    _rule(
        "npm-access-token",
        "npm access token",
        ("npm_",),
        _lead("npm_", 4) + "[a-z0-9]{36}" + _END,
        re.IGNORECASE,
    ),
    _rule(
        "pypi-upload-token",
        "PyPI upload token",
        ("pypi-ageichlwas5vcmc",),
        "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}",
    ),
    _rule(
        "databricks-api-token",
        "Databricks API token",
        ("dapi",),
        _lead("dapi", 4) + f"{_HEX}{{32}}(?:-[0-9])?" + _END,
    ),
    _rule(
        "hashicorp-tf-api-token",
        "HashiCorp Terraform API token",
        (".atlasv1.",),
        r"\.atlasv1\.(?<=[a-zA-Z0-9]{14}\.atlasv1\.)[a-zA-Z0-9_=-]{60,70}",
        back=14,
    ),
    _rule(
        "pulumi-api-token",
        "Pulumi API token",
        ("pul-",),
        _lead("pul-", 4) + f"{_HEX}{{40}}" + _END,
    ),
    _rule(
        "postman-api-token",
        "Postman API token",
        (),
        _lead("PMAK-", 5) + "[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _END,
    ),
    _rule(
        "grafana-api-key",
        "Grafana API key",
        ("eyjrijoi",),
        _lead("eyJrIjoi", 8) + f"{_B64}{{70,400}}={{0,3}}" + _END,
        re.IGNORECASE,
    ),
    _rule(
        "grafana-cloud-api-token",
        "Grafana Cloud API token",
        ("glc_",),
        _lead("glc_", 4) + f"{_B64}{{32,400}}={{0,3}}" + _END,
        re.IGNORECASE,
    ),
    _rule(
        "grafana-service-account-token",
        "Grafana service account token",
        ("glsa_",),
        _lead("glsa_", 5) + "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _END,
        re.IGNORECASE,
    ),
    _rule(
        "sentry-user-token",
        "Sentry user token",
        ("sntryu_",),
        _lead("sntryu_", 7) + f"{_HEX}{{64}}" + _END,
    ),
    _rule(
        "sentry-org-token",
        "Sentry org token",
        ("sntrys_",),
        _lead("sntrys_eyJpYXQiO", 16)
        + f"{_B64}{{10,200}}(?:LCJyZWdpb25fdXJs|InJlZ2lvbl91cmwi|cmVnaW9uX3VybCI6)"
        + f"{_B64}{{10,200}}={{0,2}}_{_B64}{{43}}(?!{_B64})",
    ),
    _rule(
        "stripe-access-token",
        "Stripe access token",
        ("k_test_", "k_live_", "k_prod_"),  # 'sk'/'rk' before it: 1 byte of reach back
        _lead("[sr]k_(?:test|live|prod)_", 8) + "[a-zA-Z0-9]{10,99}" + _END,
        reach=(1, 7 + 99 + 3),
    ),
    _rule("shopify-access-token", "Shopify access token", ("shpat_",), "shpat_[a-fA-F0-9]{32}"),
    _rule("shopify-shared-secret", "Shopify shared secret", ("shpss_",), "shpss_[a-fA-F0-9]{32}"),
    _rule(
        "private-key",
        "Private key",
        (),
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{64,}?KEY(?: BLOCK)?-----",
        re.IGNORECASE,
    ),
)

RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


# Above this many keyword occurrences one full regex pass is cheaper than probing each one.
_MAX_PROBES = 256


def _occurrences(lowered: bytes, keywords: tuple[bytes, ...]) -> list[int] | None:
    """Sorted keyword positions; None means "scan everything" (no keywords, or too many)."""
    if not keywords:
        return None
    found: list[int] = []
    for kw in keywords:
        at = lowered.find(kw)
        while at != -1:
            found.append(at)
            if len(found) > _MAX_PROBES:
                return None
            at = lowered.find(kw, at + 1)
    return sorted(found)


def _windows(positions: list[int], before: int, after: int) -> Iterator[tuple[int, int]]:
    """Merged ``[k - before, k + after]`` windows around keyword positions."""
    lo = hi = -1
    for k in positions:
        start, end = max(0, k - before), k + after
        if start > hi:
            if hi >= 0:
                yield lo, hi
            lo = start
        hi = max(hi, end)
    if hi >= 0:
        yield lo, hi


def _rule_matches(rule: Rule, data: bytes, lowered: bytes) -> Iterator[re.Match[bytes]]:
    positions = _occurrences(lowered, rule.keywords)
    if positions is None:
        yield from rule.regex.finditer(data)
    elif rule.reach is None:
        end = 0  # like finditer: a match never starts inside the previous one
        for k in positions:
            if k >= end and (match := rule.regex.match(data, k)):
                end = max(match.end(), k + 1)
                yield match
    else:
        # Look-behinds still see bytes before ``lo``; ``hi`` lies past any possible token end
        # plus the boundary look-ahead, so ``\Z`` cannot fire early at a window edge.
        for lo, hi in _windows(positions, *rule.reach):
            yield from rule.regex.finditer(data, lo, hi)


# The rules without keywords, and the literal bytes every match of each must contain (its
# regex's own start; ``True``: looked for in the lower-cased data). None there: the rule's
# whole-data scan is skipped — most text holds none of these, and 15 regex passes over every
# memory were most of a scan's cost (an import scans each memory three times).
_NEEDLES: dict[str, tuple[bool, tuple[bytes, ...]]] = {
    "aws-access-token": (False, (b"A3T", b"AKIA", b"ASIA", b"ABIA", b"ACCA")),
    "gcp-api-key": (False, (b"AIza",)),
    "azure-ad-client-secret": (False, (b"Q~",)),
    "github-pat": (False, (b"ghp_",)),
    "github-app-token": (False, (b"ghu_", b"ghs_")),
    "github-oauth": (False, (b"gho_",)),
    "github-refresh-token": (False, (b"ghr_",)),
    "gitlab-pat": (False, (b"glpat-",)),
    "gitlab-deploy-token": (False, (b"gldt-",)),
    "slack-bot-token": (False, (b"xoxb-",)),
    "slack-user-token": (False, (b"xoxp-", b"xoxe-")),
    "twilio-api-key": (False, (b"SK",)),
    "sendgrid-api-token": (False, (b"SG.",)),
    "postman-api-token": (False, (b"PMAK-",)),
    "private-key": (True, (b"-----begin",)),
}


_KEYWORDS = frozenset(k for rule in RULES for k in rule.keywords)


def _candidates(data: bytes, lowered: bytes) -> list[Rule]:
    """The rules that can match ``data``: one of its keywords is there, or (no keywords) one
    of its needles; each keyword and needle looked for once, not once per rule."""
    present = {k for k in _KEYWORDS if k in lowered}
    out = []
    for rule in RULES:
        if rule.keywords:
            if not present.isdisjoint(rule.keywords):
                out.append(rule)
            continue
        gate = _NEEDLES.get(rule.id)
        if gate is None or any(n in (lowered if gate[0] else data) for n in gate[1]):
            out.append(rule)
    return out


def _spans(data: bytes) -> list[tuple[int, int, Rule]]:
    """(start, end, rule) of every token, sorted by position."""
    lowered = data.lower()
    spans = [
        (match.start() - rule.back, match.end(), rule)
        for rule in _candidates(data, lowered)
        for match in _rule_matches(rule, data, lowered)
    ]
    spans.sort(key=lambda s: (s[0], s[1]))
    return spans


def _credentials(data: bytes) -> list[tuple[int, int, Rule]]:
    """:func:`_spans` minus documentation placeholders (see :mod:`memdir.team.placeholders`)."""
    return [
        span for span in _spans(data) if not is_placeholder(span[2].id, data[span[0] : span[1]])
    ]


def _encode(text: str) -> bytes:
    # surrogatepass: a lone surrogate (possible in str) must not make scanning fail.
    return text.encode("utf-8", "surrogatepass")


def scan_bytes(data: bytes) -> list[Finding]:
    """Every credential in UTF-8 ``data``, in order of position; at most one per rule and line."""
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    line, pos = 1, 0
    for start, _, rule in _credentials(data):
        line += data.count(b"\n", pos, start)
        pos = start
        if (rule.id, line) not in seen:
            seen.add((rule.id, line))
            findings.append(Finding(rule.id, rule.label, line))
    return findings


def scan(text: str) -> list[Finding]:
    """Every credential in ``text``, in order of position; at most one per rule and line."""
    return scan_bytes(_encode(text))


def scan_file(path: Path | str) -> list[Finding]:
    """:func:`scan` a file's bytes (any encoding that keeps ASCII as ASCII, binary included)."""
    p = Path(path)
    try:
        data = read_regular(p)  # a FIFO in a scanned tree is refused, never waited on
    except FileNotFoundError:
        raise MemoryNotFoundError(f"no such file: {p}") from None
    except NotRegularFileError:
        raise
    except OSError as exc:
        raise MemdirError(f"cannot read {p}: {exc.strerror}") from None
    return scan_bytes(data)


def labels(findings: Iterable[Finding]) -> list[str]:
    """Distinct labels, in first-seen order: what an error message or a refusal names."""
    return list(dict.fromkeys(f.label for f in findings))


def redact(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED]``; everything else unchanged."""
    data = _encode(text)
    spans = _credentials(data)
    if not spans:
        return text
    out: list[bytes] = []
    pos = 0
    for start, end, _ in spans:
        if end <= pos:
            continue  # inside a span already redacted (overlapping rules)
        if start >= pos:
            out.append(data[pos:start])
            out.append(REDACTED.encode())
        pos = end
    out.append(data[pos:])
    # Tokens are ASCII, so every cut falls between whole UTF-8 characters.
    return b"".join(out).decode("utf-8", "surrogatepass")


__all__ = [
    "REDACTED",
    "RULES",
    "RULES_BY_ID",
    "Finding",
    "Rule",
    "labels",
    "redact",
    "scan",
    "scan_bytes",
    "scan_file",
]
