"""Credential scanner for content bound for shared (team) memory.

Invariant: nothing in this module ever returns, logs or formats a matched secret. A
:class:`Finding` carries the rule id, a human label and a line number -- never the value --
so findings are safe to print, log, raise and send over the wire. :func:`redact` is the only
function that touches matched text, and it only removes it.

The 36 rules are the well-known public token formats of gitleaks' default configuration
(same rule ids), rewritten for Python's ``re``:

* Every pattern starts with its literal prefix so ``re`` can use its fast literal search; a
  leading ``\\b`` would disable that and cost a regex attempt at every character. The word
  boundary before the token is a fixed-width look-behind placed right after the prefix instead.
* The trailing gitleaks boundary (quote, backtick, whitespace, ``;``, a literal ``\\n``/``\\r``
  or end of text) is a look-ahead, so two tokens separated by one space are both found.
* Before a rule's regex runs, a cheap keyword check (lower-cased substring search, as gitleaks
  does) skips rules whose prefix cannot occur; clean text costs one ``lower()`` and a few dozen
  substring searches. ``benchmarks/secrets_bench.py`` measures it.

Sensitive prefixes are assembled at run time so this file does not look like a key to other
scanners, and so the scanner passes over its own source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import MemdirError, MemoryNotFoundError

REDACTED = "[REDACTED]"

# gitleaks' end-of-secret boundary, as a look-ahead.
_END = r"(?=[`'\"\s;]|\\[nr]|\Z)"
_WORD = "[0-9A-Za-z_]"


@dataclass(frozen=True, slots=True)
class Rule:
    """One credential format. ``keywords`` are lower-case; one must occur for the regex to run."""

    id: str
    label: str
    keywords: tuple[str, ...]
    regex: re.Pattern[str]
    back: int = 0  # the token starts this many chars before the match (look-behind anchored)


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
) -> Rule:
    return Rule(rule_id, label, tuple(keywords), re.compile(pattern, flags | re.ASCII), back)


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
        ("a3t", "akia", "asia", "abia", "acca"),
        _lead("A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA", 4) + f"[A-Z2-7]{{16}}(?!{_WORD})",
    ),
    _rule("gcp-api-key", "GCP API key", ("aiza",), _lead("AIza", 4) + "[A-Za-z0-9_-]{35}" + _END),
    _rule(
        "azure-ad-client-secret",
        "Azure AD client secret",
        ("q~",),
        # Anchored on the literal 'Q~' for speed; the 4 chars before it (and the delimiter or
        # start of text before those) are checked by look-behinds.
        r"(?<=[0-9A-Za-z_~.]{3}[0-9])Q~(?<![^\\'\"`\s>=:(,)][0-9A-Za-z_~.]{3}[0-9]Q~)"
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
    ),
    _rule(
        "huggingface-access-token",
        "Hugging Face access token",
        ("hf_",),
        _lead("hf_", 3) + "[a-z]{34}" + _END,
        re.IGNORECASE,
    ),
    _rule("github-pat", "GitHub personal access token", ("ghp_",), "ghp_[0-9a-zA-Z]{36}"),
    _rule(
        "github-fine-grained-pat",
        "GitHub fine-grained personal access token",
        ("github_pat_",),
        "github_pat_[0-9A-Za-z_]{82}",
    ),
    _rule("github-app-token", "GitHub app token", ("ghu_", "ghs_"), "gh[us]_[0-9a-zA-Z]{36}"),
    _rule("github-oauth", "GitHub OAuth access token", ("gho_",), "gho_[0-9a-zA-Z]{36}"),
    _rule("github-refresh-token", "GitHub refresh token", ("ghr_",), "ghr_[0-9a-zA-Z]{36}"),
    _rule("gitlab-pat", "GitLab personal access token", ("glpat-",), "glpat-[0-9A-Za-z_-]{20}"),
    _rule("gitlab-deploy-token", "GitLab deploy token", ("gldt-",), "gldt-[0-9a-zA-Z_-]{20}"),
    _rule(
        "slack-bot-token",
        "Slack bot token",
        ("xoxb",),
        f"xoxb-{_SLACK_NUM}-{_SLACK_NUM}[a-zA-Z0-9-]*",
    ),
    _rule(
        "slack-user-token",
        "Slack user token",
        ("xoxp-", "xoxe-"),
        f"xox[pe](?:-{_SLACK_NUM}){{3}}-[a-zA-Z0-9-]{{28,34}}",
    ),
    _rule(
        "slack-app-token",
        "Slack app token",
        ("xapp",),
        r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+",
        re.IGNORECASE,
    ),
    _rule("twilio-api-key", "Twilio API key", ("sk",), "SK[0-9a-fA-F]{32}"),
    _rule(
        "sendgrid-api-token",
        "SendGrid API token",
        ("sg.",),
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
        ("atlasv1",),
        r"(?<=[a-zA-Z0-9]{14})\.atlasv1\.[a-zA-Z0-9_=-]{60,70}",
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
        ("pmak-",),
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
        tuple(f"{a}_{b}_" for a in ("sk", "rk") for b in ("test", "live", "prod")),
        _lead("[sr]k_(?:test|live|prod)_", 8) + "[a-zA-Z0-9]{10,99}" + _END,
    ),
    _rule("shopify-access-token", "Shopify access token", ("shpat_",), "shpat_[a-fA-F0-9]{32}"),
    _rule("shopify-shared-secret", "Shopify shared secret", ("shpss_",), "shpss_[a-fA-F0-9]{32}"),
    _rule(
        "private-key",
        "Private key",
        ("-----begin",),
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{64,}?KEY(?: BLOCK)?-----",
        re.IGNORECASE,
    ),
)

RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


def _candidates(text: str) -> Iterator[Rule]:
    """Rules whose keyword occurs in ``text`` (the prefilter)."""
    lowered = text.lower()
    for rule in RULES:
        if any(kw in lowered for kw in rule.keywords):
            yield rule


def _spans(text: str) -> Iterator[tuple[Rule, int, int]]:
    for rule in _candidates(text):
        for match in rule.regex.finditer(text):
            yield rule, match.start() - rule.back, match.end()


def scan(text: str) -> list[Finding]:
    """Every credential in ``text``, in order of position; at most one per rule and line."""
    hits = sorted(((start, rule) for rule, start, _ in _spans(text)), key=lambda h: h[0])
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    line, pos = 1, 0
    for start, rule in hits:
        line += text.count("\n", pos, start)
        pos = start
        if (rule.id, line) not in seen:
            seen.add((rule.id, line))
            findings.append(Finding(rule.id, rule.label, line))
    return findings


def scan_file(path: Path | str) -> list[Finding]:
    """:func:`scan` a file read as UTF-8 (undecodable bytes replaced, so binary files work)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise MemoryNotFoundError(f"no such file: {p}") from None
    except OSError as exc:
        raise MemdirError(f"cannot read {p}: {exc.strerror}") from None
    return scan(data.decode("utf-8", errors="replace"))


def labels(findings: Iterable[Finding]) -> list[str]:
    """Distinct labels, in first-seen order: what an error message or a refusal names."""
    return list(dict.fromkeys(f.label for f in findings))


def redact(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED]``; everything else unchanged."""
    spans = sorted((start, end) for _, start, end in _spans(text))
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in spans:
        if end <= pos:
            continue  # inside a span already redacted (overlapping rules)
        if start >= pos:
            out.append(text[pos:start])
            out.append(REDACTED)
        pos = end
    out.append(text[pos:])
    return "".join(out)


__all__ = [
    "REDACTED",
    "RULES",
    "RULES_BY_ID",
    "Finding",
    "Rule",
    "labels",
    "redact",
    "scan",
    "scan_file",
]
