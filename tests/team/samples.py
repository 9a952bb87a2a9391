"""Generated credential samples for every scanner rule, plus near-misses that must not match.

Nothing here is a real credential: tokens are random characters of each format's alphabet,
made at test time, so no key is committed to the repository (and the repository passes its own
scanner). Used by ``tests/team/test_secrets.py`` and ``benchmarks/secrets_bench.py``.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
HEX = "0123456789abcdef"
HEXMIX = HEX + "ABCDEF"
WORD = ALNUM + "_"
WORD_DASH = WORD + "-"
B64 = ALNUM + "+/"
B32 = UPPER + "234567"

Gen = Callable[[random.Random], str]


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


@dataclass(frozen=True)
class Spec:
    """A token is ``prefix(rng) + body + tail``; ``body`` is ``length`` chars of ``alphabet``.

    ``lead``/``end``: the rule needs a boundary before/after the token. ``stop`` is a char
    outside the body alphabet that is not a boundary (used to break the end boundary).
    ``custom``: extra hand-written near-misses for structured formats.
    """

    prefix: Gen
    alphabet: str
    length: tuple[int, int]
    tail: str = ""
    lead: bool = True
    end: bool = True
    stop: str = "!"
    end_ok: str = " ;'\"`"
    custom: tuple[Gen, ...] = field(default_factory=tuple)
    structured: bool = False

    def token(self, rng: random.Random, n: int | None = None) -> str:
        size = n if n is not None else rng.randint(*self.length)
        return self.prefix(rng) + rand(rng, self.alphabet, size) + self.tail

    def near_misses(self, rng: random.Random) -> list[tuple[str, str]]:
        """(kind, text) pairs that must produce no finding for this rule."""
        if self.structured:
            return [("structure", gen(rng) + " ") for gen in self.custom]
        lo = self.length[0]
        cases = [("too-short", self.prefix(rng) + rand(rng, self.alphabet, lo - 1) + self.tail)]
        body = list(rand(rng, self.alphabet, lo))
        body[lo // 2] = self.stop
        cases.append(("wrong-alphabet", self.prefix(rng) + "".join(body) + self.tail))
        if self.end:
            cases.append(("no-end-boundary", self.token(rng, lo) + self.stop))
        if self.lead:
            cases.append(("no-lead-boundary", "x" + self.token(rng)))
        cases.extend(("structure", gen(rng)) for gen in self.custom)
        return [(kind, text + " ") for kind, text in cases]


def fixed(*options: str) -> Gen:
    return lambda rng: rng.choice(options)


def _oai_mark() -> str:
    return "T3Blbk" + "FJ"


def _openai(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "sk-" + rand(rng, ALNUM, 20) + _oai_mark() + rand(rng, ALNUM, 20)
    n = rng.choice((58, 74))
    kind = rng.choice(("proj", "svcacct", "admin"))
    return f"sk-{kind}-" + rand(rng, WORD_DASH, n) + _oai_mark() + rand(rng, ALNUM, n)


def _slack_digits(rng: random.Random, n: int | None = None) -> str:
    return rand(rng, DIGITS, n if n is not None else rng.randint(10, 13))


def _sentry_org(rng: random.Random, marker: bool = True, last: int = 43) -> str:
    mid = rng.choice(("LCJyZWdpb25fdXJs", "InJlZ2lvbl91cmwi", "cmVnaW9uX3VybCI6"))
    return (
        "sntrys_eyJpYXQiO"
        + rand(rng, B64, rng.randint(10, 60))
        + (mid if marker else "")
        + rand(rng, B64, rng.randint(10, 60))
        + "_"
        + rand(rng, B64, last)
    )


def _private_key(rng: random.Random, body: int = 800, kind: str = "RSA PRIVATE") -> str:
    lines = [rand(rng, B64, 64) for _ in range(body // 64)] + [rand(rng, B64, body % 64)]
    inner = "\n".join(line for line in lines if line)
    return f"-----BEGIN {kind} KEY-----\n{inner}\n-----END {kind} KEY-----"


def _ant(kind: str) -> str:
    return "sk-" + "ant-" + kind + "-"


def _structured(gen: Gen, *custom: Gen, end_ok: str = " ;'\"`") -> Spec:
    """A format checked only by its own generator and hand-written near-misses."""
    return Spec(gen, "", (0, 0), end_ok=end_ok, custom=custom, structured=True)


SPECS: dict[str, Spec] = {
    "aws-access-token": Spec(
        prefix=lambda r: r.choice(("AKIA", "ASIA", "ABIA", "ACCA", "A3T" + r.choice(B32))),
        alphabet=B32,
        length=(16, 16),
        stop="_",
        custom=(lambda r: "AKIA" + rand(r, B32, 15) + "1",),  # '1' is not base32
    ),
    "gcp-api-key": Spec(fixed("AIza"), WORD_DASH, (35, 35)),
    "azure-ad-client-secret": Spec(
        prefix=lambda r: rand(r, ALNUM, 3) + r.choice(DIGITS) + "Q~",
        alphabet=ALNUM + "_~.-",
        length=(31, 34),
        end_ok=" '\"`),",
        custom=(
            lambda r: rand(r, ALNUM, 3) + r.choice(LOWER) + "Q~" + rand(r, ALNUM, 34),
        ),  # 4th char not a digit
    ),
    "digitalocean-pat": Spec(fixed("dop_v1_"), HEX, (64, 64), stop="g"),
    "digitalocean-access-token": Spec(fixed("doo_v1_"), HEX, (64, 64), stop="g"),
    "anthropic-api-key": Spec(lambda r: _ant("api03"), WORD_DASH, (93, 93), tail="AA"),
    "anthropic-admin-api-key": Spec(lambda r: _ant("admin01"), WORD_DASH, (93, 93), tail="AA"),
    "openai-api-key": _structured(
        _openai,
        *(
            lambda r: "sk-" + rand(r, ALNUM, 19) + _oai_mark() + rand(r, ALNUM, 20),
            lambda r: "sk-proj-" + rand(r, ALNUM, 57) + _oai_mark() + rand(r, ALNUM, 58),
            lambda r: "sk-proj-" + rand(r, ALNUM, 58) + "T3BlbkFX" + rand(r, ALNUM, 58),
            lambda r: "xsk-" + rand(r, ALNUM, 20) + _oai_mark() + rand(r, ALNUM, 20),
        ),
    ),
    "huggingface-access-token": Spec(fixed("hf_", "HF_"), string.ascii_letters, (34, 34)),
    "github-pat": Spec(fixed("ghp_"), ALNUM, (36, 36), lead=False, end=False),
    "github-fine-grained-pat": Spec(fixed("github_pat_"), WORD, (82, 82), lead=False, end=False),
    "github-app-token": Spec(fixed("ghu_", "ghs_"), ALNUM, (36, 36), lead=False, end=False),
    "github-oauth": Spec(fixed("gho_"), ALNUM, (36, 36), lead=False, end=False),
    "github-refresh-token": Spec(fixed("ghr_"), ALNUM, (36, 36), lead=False, end=False),
    "gitlab-pat": Spec(fixed("glpat-"), WORD_DASH, (20, 20), lead=False, end=False),
    "gitlab-deploy-token": Spec(fixed("gldt-"), WORD_DASH, (20, 20), lead=False, end=False),
    "slack-bot-token": _structured(
        lambda r: f"xoxb-{_slack_digits(r)}-{_slack_digits(r)}" + rand(r, ALNUM + "-", 24),
        lambda r: f"xoxb-{_slack_digits(r, 9)}-{_slack_digits(r)}-abc",
        lambda r: f"xoxb-{_slack_digits(r)}-{_slack_digits(r, 9)} ",
        lambda r: f"xoxb-{_slack_digits(r, 5)}x{_slack_digits(r, 5)}-{_slack_digits(r)}",
    ),
    "slack-user-token": _structured(
        lambda r: (
            r.choice(("xoxp", "xoxe"))
            + "".join(f"-{_slack_digits(r)}" for _ in range(3))
            + "-"
            + rand(r, ALNUM + "-", r.randint(28, 34))
        ),
        lambda r: (
            "xoxp"
            + "".join(f"-{_slack_digits(r)}" for _ in range(3))
            + "-"
            + rand(r, ALNUM, 27)
            + "!"
        ),
        lambda r: (
            "xoxp" + "".join(f"-{_slack_digits(r)}" for _ in range(2)) + "-" + rand(r, ALNUM, 30)
        ),
    ),
    "slack-app-token": _structured(
        lambda r: (
            r.choice(("xapp", "XAPP"))
            + f"-{r.choice(DIGITS)}-"
            + rand(r, UPPER + DIGITS, 11)
            + "-"
            + _slack_digits(r)
            + "-"
            + rand(r, LOWER + DIGITS, 64)
        ),
        lambda r: "xapp-12-" + rand(r, UPPER, 11) + "-" + _slack_digits(r) + "-abc",
        lambda r: "xapp-1-" + rand(r, UPPER, 11) + "-" + _slack_digits(r) + "-!",
    ),
    "twilio-api-key": Spec(fixed("SK"), HEXMIX, (32, 32), lead=False, end=False, stop="g"),
    "sendgrid-api-token": Spec(fixed("SG."), ALNUM + "=_.-", (66, 66)),
    "npm-access-token": Spec(fixed("npm_", "NPM_"), LOWER + DIGITS, (36, 36)),
    "pypi-upload-token": Spec(
        fixed("pypi-AgEIcHlwaS5vcmc"), WORD_DASH, (50, 200), lead=False, end=False
    ),
    "databricks-api-token": Spec(
        fixed("dapi"),
        HEX,
        (32, 32),
        tail="",
        stop="g",
        custom=(lambda r: "dapi" + rand(r, HEX, 32) + "-12",),
    ),
    "hashicorp-tf-api-token": Spec(
        lambda r: rand(r, ALNUM, 14) + ".atlasv1.",
        ALNUM + "_=-",
        (60, 70),
        lead=False,
        end=False,
        custom=(lambda r: rand(r, ALNUM, 13) + ".atlasv1." + rand(r, ALNUM, 70),),
    ),
    "pulumi-api-token": Spec(fixed("pul-"), HEX, (40, 40), stop="g"),
    "postman-api-token": Spec(
        lambda r: "PMAK-" + rand(r, HEXMIX, 24) + "-",
        HEXMIX,
        (34, 34),
        stop="g",
        custom=(lambda r: "PMAK-" + rand(r, HEX, 23) + "-" + rand(r, HEX, 34),),
    ),
    "grafana-api-key": Spec(fixed("eyJrIjoi"), ALNUM, (70, 400)),
    "grafana-cloud-api-token": Spec(fixed("glc_"), B64, (32, 400)),
    "grafana-service-account-token": Spec(
        lambda r: "glsa_" + rand(r, ALNUM, 32) + "_",
        HEXMIX,
        (8, 8),
        stop="g",
        custom=(lambda r: "glsa_" + rand(r, ALNUM, 31) + "_" + rand(r, HEX, 8),),
    ),
    "sentry-user-token": Spec(fixed("sntryu_"), HEX, (64, 64), stop="g"),
    "sentry-org-token": _structured(
        _sentry_org,
        lambda r: _sentry_org(r, marker=False),
        lambda r: _sentry_org(r, last=42) + "!",
        lambda r: "x" + _sentry_org(r),
    ),
    "stripe-access-token": Spec(
        lambda r: r.choice(("sk", "rk")) + "_" + r.choice(("test", "live", "prod")) + "_",
        ALNUM,
        (10, 99),
        custom=(lambda r: "pk_live_" + rand(r, ALNUM, 24),),
    ),
    "shopify-access-token": Spec(
        fixed("shpat_"), HEXMIX, (32, 32), lead=False, end=False, stop="g"
    ),
    "shopify-shared-secret": Spec(
        fixed("shpss_"), HEXMIX, (32, 32), lead=False, end=False, stop="g"
    ),
    "private-key": _structured(
        lambda r: _private_key(r, kind=r.choice(("RSA PRIVATE", "PRIVATE", "OPENSSH PRIVATE"))),
        lambda r: _private_key(r, body=30),  # under 64 chars up to "KEY-----"
        lambda r: _private_key(r, kind="PUBLIC"),
        lambda r: "-----BEGIN RSA PRIVATE KEY-----\n" + rand(r, B64, 200),
    ),
}


GITLEAKS_SAMPLES = Path(__file__).parent / "data" / "gitleaks_samples.json"


def gitleaks_samples() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(true positives, false positives) by rule id: gitleaks' own literal rule-test samples.

    Stored reversed on disk (see the file's ``encoding`` note); returned readable.
    """
    data = json.loads(GITLEAKS_SAMPLES.read_text(encoding="utf-8"))

    def readable(group: dict[str, list[str]]) -> dict[str, list[str]]:
        return {rule: [sample[::-1] for sample in samples] for rule, samples in group.items()}

    return readable(data["true_positives"]), readable(data["false_positives"])
