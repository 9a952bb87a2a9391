"""Long, real-shaped coding-session transcripts with planted facts (for the compaction bench).

``write_session(path, seed, turns)`` writes a transcript the way Claude Code logs one: typed user
messages as strings, each assistant block (thinking, text, tool_use) as its own entry sharing the
reply's message id, one tool-result entry per call, parallel tool calls, multi-step tool loops,
big file reads and test output. Planted facts are returned so a benchmark can check what
survives compaction:

* requests — explicit asks, each with a unique key phrase (``KEY-<n>``-free wording, e.g.
  "rate limiting to the orders endpoint"), sometimes after a line of context;
* corrections — "No, use X instead of Y" / "That's wrong, ..." with a unique X;
* decisions — "Let's go with X for Y";
* files — every path read, edited or written;
* errors — unique error messages inside failing tool output.

Usage: ``python -m benchmarks.session_transcripts OUT.jsonl [--seed N] [--turns N]``.
"""

from __future__ import annotations

import argparse
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.transcripts import Transcript, tool_use_block

FEATURES = [
    "rate limiting to the orders endpoint",
    "a retry budget for the payment webhook",
    "pagination to the invoices listing",
    "an audit log for admin role changes",
    "CSV export of monthly sales",
    "a health check for the cache cluster",
    "soft delete for customer accounts",
    "idempotency keys on refund requests",
    "a dark mode toggle in the settings page",
    "request tracing across the worker queue",
    "a feature flag for the new checkout flow",
    "email verification on signup",
    "a nightly cleanup job for stale carts",
    "per-tenant quotas on file uploads",
    "a circuit breaker around the tax service",
    "structured logging in the billing service",
    "OpenAPI docs for the shipping endpoints",
    "a migration that splits the address table",
    "password reset throttling",
    "currency rounding rules for JPY",
    "a cache warmup step on deploy",
    "timezone-aware scheduling for reports",
    "bulk import of product variants",
    "a webhook signature check for the CRM",
]
CORRECTIONS = [
    ("httpx", "requests"),
    ("Decimal", "float"),
    ("pydantic v2 validators", "manual isinstance checks"),
    ("structlog", "print statements"),
    ("pytest fixtures", "setUp methods"),
    ("pathlib", "os.path"),
    ("SQLAlchemy Core", "raw SQL strings"),
    ("zoneinfo", "pytz"),
    ("orjson", "the json module"),
    ("tenacity", "a hand-written retry loop"),
]
DECISIONS = [
    ("PostgreSQL advisory locks", "the job queue"),
    ("Redis streams", "the event bus"),
    ("a monorepo layout", "the shared libraries"),
    ("UUIDv7 keys", "the orders table"),
    ("feature branches squashed on merge", "the git workflow"),
    ("OpenTelemetry", "tracing"),
]
MODULES = [
    "api/orders",
    "api/payments",
    "api/invoices",
    "api/admin",
    "api/shipping",
    "core/cart",
    "core/tax",
    "core/money",
    "core/accounts",
    "core/uploads",
    "workers/queue",
    "workers/cleanup",
    "workers/reports",
    "services/crm",
    "services/billing",
    "services/cache",
    "db/models",
    "db/migrations",
    "auth/passwords",
    "auth/signup",
    "web/settings",
    "web/checkout",
    "util/tracing",
    "util/flags",
    "util/logging",
    "util/retry",
    "util/timezones",
    "util/csv",
]
ERRORS = [
    "KeyError: 'tenant_id' in quota_for()",
    "sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint orders_pkey",
    "TypeError: unsupported operand type(s) for +: 'Decimal' and 'float'",
    "AssertionError: expected 429 Too Many Requests, got 200",
    "ImportError: cannot import name 'RetryBudget' from 'util.retry'",
    "ValueError: invalid timezone 'EST5EDT+'",
    "redis.exceptions.ConnectionError: Error 111 connecting to cache-0:6379",
    "jsonschema.ValidationError: 'currency' is a required property",
    "PermissionError: [Errno 13] Permission denied: '/var/run/uploads.sock'",
    "ZeroDivisionError: division by zero in monthly_average()",
    "RecursionError: maximum recursion depth exceeded in serialize_node",
    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 7",
]
FILLER_ASKS = [
    "Run the whole test suite again and tell me what fails.",
    "Can you check the git status and summarise what changed?",
    "Look at the CI logs from the last run.",
    "What does the retry helper do exactly?",
    "Show me where the tenant id gets set.",
    "ok continue",
    "Go ahead.",
    "Please also update the docstrings you touched.",
]


@dataclass
class Planted:
    requests: list[str] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "requests": self.requests,
            "corrections": self.corrections,
            "decisions": self.decisions,
            "files": self.files,
            "errors": self.errors,
        }


class _Writer:
    def __init__(self, path: Path, rng: random.Random) -> None:
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.t = Transcript(path, sid, "/work/shop", git_branch="main")
        self.rng = rng
        self.planted = Planted()

    def _touch(self, path: str) -> None:
        if path not in self.planted.files:
            self.planted.files.append(path)

    def reply(self, blocks: list[dict[str, Any]]) -> None:
        mid = f"msg_{self.rng.getrandbits(64):016x}"
        for block in blocks:
            stop = "tool_use" if block["type"] == "tool_use" else None
            self.t.assistant([block], model="claude-bench", message_id=mid, stop_reason=stop)

    def tools(self, calls: list[tuple[str, dict[str, Any], str, bool]], lead: str = "") -> None:
        """One reply with parallel tool calls, then one result entry per call."""
        uses = [tool_use_block(name, args) for name, args, _, _ in calls]
        head: list[dict[str, Any]] = []
        if self.rng.random() < 0.5:
            head.append({"type": "thinking", "thinking": _prose(self.rng, 60), "signature": "sig"})
        if lead:
            head.append({"type": "text", "text": lead})
        self.reply(head + uses)
        for use, (_, _, result, error) in zip(uses, calls, strict=True):
            self.t.tool_result(use["id"], result, is_error=error)

    def file(self, module: str) -> str:
        path = f"/work/shop/src/shop/{module}.py"
        self._touch(path)
        return path


_VOCABULARY = (
    "the of handler request response tenant order invoice value config retry cache worker "
    "returns raises checks builds loads updates service module function payload status queue"
)
_WORDS = _VOCABULARY.split()


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _code(rng: random.Random, module: str, lines: int) -> str:
    name = module.rsplit("/", 1)[-1]
    out = [f'"""The {name} module."""', "", "from __future__ import annotations", ""]
    for i in range(lines // 6):
        out += [
            f"def {name}_step_{i}(value, tenant=None):",
            f"    # {_prose(rng, 8)}",
            f"    result = compute_{i % 7}(value, tenant)",
            "    if result is None:",
            f"        raise ValueError('no result for step {i}')",
            "    return result",
        ]
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(out, 1))


def _test_output(rng: random.Random, error: str | None) -> str:
    bar = "=" * 25
    dots = "".join(rng.choice("....F") if error else "." for _ in range(60))
    lines = [
        f"{bar} test session starts {bar}",
        f"collected {rng.randint(120, 400)} items",
        "",
        f"tests/test_shop.py {dots}",
    ]
    if error:
        lines += [
            "",
            f"{bar} FAILURES {bar}",
            "Traceback (most recent call last):",
            '  File "/work/shop/src/shop/core/x.py", line 41, in run',
            "    return handler(value)",
            f"E   {error}",
            f"FAILED tests/test_shop.py::test_case - {error.split(':')[0]}",
            f"{bar} 1 failed, {rng.randint(100, 300)} passed in 4.21s {bar}",
        ]
    else:
        lines.append(f"{bar} {rng.randint(120, 400)} passed in 3.97s {bar}")
    return "\n".join(lines)


def write_session(path: Path, *, seed: int = 0, turns: int = 90) -> Planted:
    """Write one long session to ``path`` (overwritten) and return what was planted."""
    rng = random.Random(seed)
    if path.exists():
        path.unlink()
    w = _Writer(path, rng)
    features = rng.sample(FEATURES, k=min(len(FEATURES), turns // 4))
    corrections = list(CORRECTIONS)
    decisions = list(DECISIONS)
    errors = list(ERRORS)
    rng.shuffle(corrections)
    rng.shuffle(errors)
    plan: list[str] = ["feature"] * len(features) + ["correction"] * min(
        len(corrections), turns // 9
    )
    plan += ["decision"] * min(len(decisions), turns // 15)
    plan += ["filler"] * max(0, turns - len(plan))
    rng.shuffle(plan)
    plan[0] = "feature"  # a session opens with a real request
    if "feature" not in plan[1:] and len(features) > 1:
        plan[-1] = "feature"
    for kind in plan:
        module = rng.choice(MODULES)
        if kind == "feature" and features:
            feat = features.pop()
            context = _prose(rng, rng.randint(5, 60)) + " " if rng.random() < 0.4 else ""
            ask = f"{context}Please add {feat} in src/shop/{module}.py, with tests."
            w.planted.requests.append(f"add {feat}")
            w.t.user(ask)
            _work(w, module, rng, errors)
        elif kind == "correction" and corrections:
            good, bad = corrections.pop()
            text = rng.choice(
                [f"No, use {good} instead of {bad}.", f"That's wrong, we use {good}, not {bad}."]
            )
            w.planted.corrections.append(f"use {good}")
            w.t.user(text + " " + _prose(rng, rng.randint(0, 12)))
            _work(w, module, rng, errors, short=True)
        elif kind == "decision" and decisions:
            what, where = decisions.pop()
            w.planted.decisions.append(f"{what} for {where}")
            w.t.user(f"Let's go with {what} for {where}. Make a note of it in the design doc.")
            path = "/work/shop/docs/design.md"
            w._touch(path)
            w.tools(
                [
                    (
                        "Edit",
                        {
                            "file_path": path,
                            "old_string": "## Decisions",
                            "new_string": f"## Decisions\n- {what} for {where}",
                        },
                        "ok",
                        False,
                    )
                ]
            )
            w.reply([{"type": "text", "text": f"Recorded: {what} for {where}."}])
        elif rng.random() < 0.25:  # a pasted log: long user messages happen
            log = "\n".join(
                f"2026-03-0{rng.randint(1, 9)} WARN {_prose(rng, 12)}" for _ in range(30)
            )
            w.t.user(f"Here is what staging printed:\n{log}\nWhat is going on?")
            _work(w, module, rng, errors, short=True)
        else:
            w.t.user(rng.choice(FILLER_ASKS))
            _work(w, module, rng, errors, short=True)
    return w.planted


def _work(
    w: _Writer, module: str, rng: random.Random, errors: list[str], *, short: bool = False
) -> None:
    path = w.file(module)
    test_path = f"/work/shop/tests/test_{module.rsplit('/', 1)[-1]}.py"
    w._touch(test_path)
    other = w.file(rng.choice(MODULES))
    grep = "\n".join(
        f"src/shop/{m}.py:{rng.randint(1, 200)}: def step" for m in rng.sample(MODULES, 8)
    )
    w.tools(
        [
            ("Read", {"file_path": path}, _code(rng, module, rng.randint(60, 160)), False),
            ("Read", {"file_path": other}, _code(rng, module, rng.randint(40, 120)), False),
            ("Grep", {"pattern": "def .*_step", "path": "/work/shop/src"}, grep, False),
        ],
        lead=_prose(rng, rng.randint(8, 30)),
    )
    steps = 1 if short else rng.randint(2, 4)
    for _ in range(steps):
        edit = {
            "file_path": path,
            "old_string": "return result",
            "new_string": f"return normalise(result)  # {_prose(rng, 4)}",
        }
        w.tools([("Edit", edit, "The file has been updated.", False)])
        fail = errors and rng.random() < 0.35
        error = errors.pop() if fail else None
        if error:
            w.planted.errors.append(error)
        command = {"command": f"uv run pytest {test_path} -q"}
        w.tools([("Bash", command, _test_output(rng, error), bool(error))])
        if error:
            w.reply([{"type": "text", "text": f"That failed: {error.split(':')[0]}. Fixing it."}])
    if not short:
        write = {"file_path": test_path, "content": _code(rng, module, 30)}
        w.tools([("Write", write, "File created successfully", False)])
    w.reply([{"type": "text", "text": _prose(rng, rng.randint(20, 60))}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--turns", type=int, default=90)
    args = parser.parse_args()
    planted = write_session(args.out, seed=args.seed, turns=args.turns)
    print({k: len(v) for k, v in planted.as_dict().items()})


if __name__ == "__main__":
    main()
