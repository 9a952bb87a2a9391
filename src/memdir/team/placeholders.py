"""Which regex matches are documentation placeholders rather than credentials.

A token format's regex also matches ``ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx``,
``AKIAIOSFODNN7EXAMPLE`` or ``glc_1111…``: the examples every vendor's documentation prints.
Refusing those would keep how-to notes out of team memory for no safety gain, so a match passes
through the checks gitleaks applies per rule (its ``config/gitleaks.toml``; facts, our code):

* **Entropy.** A rule with a threshold drops a token whose Shannon entropy (bits per byte, over
  the whole token, prefix included) is at or below it. Real tokens are random; placeholders
  repeat one character.
* **Rule allowlists.** AWS keys ending in ``EXAMPLE`` (Amazon's documented sample key); the GCP
  API keys that Google publishes in its own samples.
* **Global stopwords.** A token containing ``abcdefghijklmnopqrstuvwxyz`` (case-insensitive) or
  one well-known published sample secret.

Two thresholds are lower than gitleaks', on purpose: with gitleaks' 3.0, about 1 in 3,000
random AWS access keys (base32, 16 characters) and 1 in 300,000 random Databricks tokens fall
at or below the threshold and would go unreported (measured over 10^6 / 3·10^5 random tokens);
2.5 and 2.75 are below every random token measured and still far above any placeholder (a
repeated character scores about 1.0).

Left out on purpose: gitleaks' global regexes (``true``/``false``/``null``, one repeated
character, ``$VAR``/``{{ var }}``/``%s`` templates, file paths) cannot match a token of these
rules, which all start with a fixed prefix; path allowlists (files are memories, not
repositories); and the ``gitleaks:allow`` line marker, which would let any note wave a real key
into team memory.

Invariant: these checks only ever *drop* a match; they never report anything new, and they
see the token only to measure it -- nothing here stores, logs or returns it.
"""

from __future__ import annotations

import math
import re
from collections import Counter

# Rule id -> entropy threshold (gitleaks' value unless the module docstring says otherwise).
ENTROPY: dict[str, float] = {
    "aws-access-token": 2.5,  # gitleaks: 3
    "gcp-api-key": 4.0,
    "azure-ad-client-secret": 3.0,
    "databricks-api-token": 2.75,  # gitleaks: 3
    "digitalocean-pat": 3.0,
    "digitalocean-access-token": 3.0,
    "openai-api-key": 3.0,
    "huggingface-access-token": 2.0,
    "github-pat": 3.0,
    "github-fine-grained-pat": 3.0,
    "github-app-token": 3.0,
    "github-oauth": 3.0,
    "github-refresh-token": 3.0,
    "gitlab-pat": 3.0,
    "gitlab-deploy-token": 3.0,
    "slack-bot-token": 3.0,
    "slack-user-token": 2.0,
    "slack-app-token": 2.0,
    "twilio-api-key": 3.0,
    "sendgrid-api-token": 2.0,
    "npm-access-token": 2.0,
    "pypi-upload-token": 3.0,
    "hashicorp-tf-api-token": 3.5,
    "pulumi-api-token": 2.0,
    "postman-api-token": 3.0,
    "grafana-api-key": 3.0,
    "grafana-cloud-api-token": 3.0,
    "grafana-service-account-token": 3.0,
    "sentry-user-token": 3.5,
    "sentry-org-token": 4.5,
    "stripe-access-token": 2.0,
    "shopify-access-token": 2.0,
    "shopify-shared-secret": 2.0,
    # anthropic-api-key, anthropic-admin-api-key, private-key: no threshold in gitleaks either.
}

# Published sample keys from Google's own documentation and client libraries, listed by
# gitleaks. The prefix is joined at run time so this file does not look like a key to scanners.
_GCP = "AI" + "za"
_GCP_PUBLISHED = frozenset(
    (_GCP + tail).encode()
    for tail in (
        "Syabcdefghijklmnopqrstuvwxyz1234567",
        "SyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs",
        "SyCkEhVjf3pduRDt6d1yKOMitrUEke8agEM",
        "SyDMAScliyLx7F0NPDEJi1QmyCgHIAODrlU",
        "SyD3asb-2pEZVqMkmL6M9N6nHZRR_znhrh0",
        "yDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A",
        "SyAdOS2zB6NCsk1pCdZ4-P6GBdi_UUPwX7c",
        "SyASWm6HmTMdYWpgMnjRBjxcQ9CKctWmLd4",
        "SyANUvH9H9BsUccjsu2pCmEkOPjjaXeDQgY",
        "SyA5_iVawFQ8ABuTZNUdcwERLJv_a_p4wtM",
        "SyA4UrcGxgwQFTfaI3no3t7Lt1sjmdnP5sQ",
        "SyDSb51JiIcB6OJpwwMicseKRhhrOq1cS7g",
        "SyBF2RrAIm4a0mO64EShQfqfd2AFnzAvvuU",
        "SyBcE-OOIbhjyR83gm4r2MFCu4MJmprNXsw",
        "SyB8qGxt4ec15vitgn44duC5ucxaOi4FmqE",
        "SyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY",
    )
)
_AWS_EXAMPLE = re.compile(rb".+EXAMPLE\Z")
_STOPWORDS = (b"abcdefghijklmnopqrstuvwxyz", b"014df517-39d1-4453-b7b3-9930c563627c")


def shannon_entropy(data: bytes) -> float:
    """Bits per byte: 0 for one repeated byte, up to log2(len) when no byte repeats."""
    if not data:
        return 0.0
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in Counter(data).values())


def _allowed(rule_id: str, token: bytes) -> bool:
    lowered = token.lower()
    if any(word in lowered for word in _STOPWORDS):
        return True
    if rule_id == "aws-access-token":
        return _AWS_EXAMPLE.match(token) is not None
    if rule_id == "gcp-api-key":
        return token in _GCP_PUBLISHED
    return False


def is_placeholder(rule_id: str, token: bytes) -> bool:
    """Whether a match of rule ``rule_id`` is a placeholder (too regular, or a published sample)."""
    threshold = ENTROPY.get(rule_id)
    if threshold is not None and shannon_entropy(token) <= threshold:
        return True
    return _allowed(rule_id, token)


__all__ = ["ENTROPY", "is_placeholder", "shannon_entropy"]
