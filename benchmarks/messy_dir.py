"""Build a messy memory dir with known defects: ``python benchmarks/messy_dir.py <dir> [--seed N]``.

What is planted (ground truth written to ``<dir>/../truth.json``):

* ~220 distinct memories about 20 services (owners, databases, deploy days, dashboards, rules,
  incidents...), written in several sentence shapes so parallel facts about different services
  look alike (the hard case for a duplicate detector);
* exact duplicates (the same file under another name) and near duplicates (reworded: synonyms,
  reordered sentences, a detail added or dropped, a different title);
* contradicting pairs: a later memory giving the same subject another value (version, port,
  day, owner count) — half phrased as an explicit correction, half not;
* relative dates ("yesterday", "next Friday", "two weeks ago");
* a MEMORY.md over 200 lines with dead links, missing entries, duplicate entries, long lines.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from memdir.frontmatter import dump

SERVICES = [
    "billing",
    "auth",
    "search",
    "checkout",
    "notifications",
    "payments",
    "analytics",
    "gateway",
    "scheduler",
    "inventory",
    "reporting",
    "ingest",
    "exporter",
    "mailer",
    "ledger",
    "catalog",
    "recommendations",
    "profile",
    "media",
    "webhooks",
    "sessions",
    "uploads",
    "quotas",
    "audit",
]
PEOPLE = (
    "Ana Bruno Chloé Dmitri Eun-ji Farah Goran Hana Inés Jomo Kenji Lucía Mateo Nadia Olu Priya"
)
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday"]
DBS = [("Postgres", (13, 14, 15, 16)), ("MySQL", (5, 8)), ("Redis", (6, 7)), ("MongoDB", (6, 7))]
LIBS = [("httpx", "requests"), ("pydantic", "marshmallow"), ("structlog", "logging"),
        ("pytest", "unittest"), ("ruff", "flake8"), ("polars", "pandas")]  # fmt: skip
CAUSES = ["an expired TLS certificate", "a runaway cron job", "a full disk on the primary",
          "a bad feature-flag rollout", "connection pool exhaustion", "a DNS change"]  # fmt: skip
SYNONYMS = {
    "owned by": "maintained by",
    "deploys": "ships",
    "stores its data in": "keeps its data in",
    "listens on": "binds to",
    "prefer": "favour",
    "before pushing": "prior to pushing",
    "caused by": "triggered by",
    "is tracked in": "lives in",
    "gates": "controls",
}
CORRECTION_CUES = ["Correction: ", "Update: ", "Actually, ", "As of the migration, "]
RELATIVE = ["yesterday", "next Friday", "two weeks ago", "last Monday", "tomorrow", "in 3 days"]


@dataclass
class Mem:
    rel: str
    name: str
    description: str
    type: str
    body: str
    date: dt.date
    facts: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        meta = {"name": self.name, "description": self.description, "type": self.type}
        meta["created"] = meta["updated"] = self.date.isoformat()
        return dump(meta, self.body)


def _base(rng: random.Random, svc: str, kind: int, day: dt.date) -> Mem:
    who = rng.choice(PEOPLE.split())
    slug = f"{svc}_{kind}"
    if kind == 0:
        return Mem(
            f"{slug}.md",
            f"{svc.title()} ownership",
            f"{svc} is owned by {who}'s team",
            "project",
            f"The {svc} service is owned by {who}'s team.\nPage them in "
            f"#{svc}-oncall; escalations go to {rng.choice(PEOPLE.split())}.\n",
            day,
        )
    if kind == 1:
        db, versions = rng.choice(DBS)
        ver = rng.choice(versions)
        return Mem(
            f"{slug}.md",
            f"{svc.title()} database",
            f"{svc} stores its data in {db} {ver}",
            "project",
            f"{svc} stores its data in {db} {ver} ({svc}-db-{rng.randint(1, 9)})."
            f"\nBackups run nightly at 0{rng.randint(1, 5)}:00 UTC.\n",
            day,
            {"value": f"{db} {ver}", "db": db, "versions": json.dumps(versions)},
        )
    if kind == 2:
        return Mem(
            f"{slug}.md",
            f"{svc.title()} deploy day",
            f"{svc} deploys on {rng.choice(DAYS)}s",
            "project",
            f"{svc} deploys on {rng.choice(DAYS)}s through the release train.\n"
            "Freeze the week before quarter end.\n",
            day,
        )
    if kind == 3:
        n = rng.randint(100, 999)
        return Mem(
            f"{slug}.md",
            f"{svc.title()} dashboard",
            f"latency dashboard for {svc}",
            "reference",
            f"Latency and error rates for {svc}: "
            f"https://grafana.example.com/d/{svc}-{n}\nCheck it when touching request "
            "handling.\n",
            day,
        )
    if kind == 4:
        key = svc[:3].upper() + str(rng.randint(1, 9))
        return Mem(
            f"{slug}.md",
            f"{svc.title()} tracker",
            f"{svc} bugs are tracked in Linear {key}",
            "reference",
            f"Bugs for {svc} are tracked in Linear project {key}.\n",
            day,
        )
    if kind == 5:
        return Mem(
            f"{slug}.md",
            f"Test {svc} before pushing",
            f"run make test-{svc} before pushing",
            "feedback",
            f"When editing {svc}, run `make test-{svc}` before pushing.\n"
            f"**Why:** the CI cache hid a {svc} failure once.\n**How to apply:** every "
            f"change under {svc}/.\n",
            day,
        )
    if kind == 6:
        port = rng.choice([8000, 8080, 8443, 9000, 9090, 5000, 3000])
        return Mem(
            f"{slug}.md",
            f"{svc.title()} dev port",
            f"{svc} listens on port {port} locally",
            "project",
            f"In local dev {svc} listens on port {port}.\n",
            day,
            {"value": str(port)},
        )
    if kind == 7:
        flag = f"{svc}_v2_{rng.choice(['ui', 'api', 'pipeline', 'cache'])}"
        return Mem(
            f"{slug}.md",
            f"{svc.title()} flag",
            f"the {flag} flag gates the {svc} rewrite",
            "project",
            f"The `{flag}` flag gates the {svc} rewrite; it is off in prod.\n",
            day,
        )
    if kind == 8:
        month = rng.choice(["March", "June", "September"])
        cause = rng.choice(CAUSES)
        return Mem(
            f"{slug}.md",
            f"{svc.title()} {month} incident",
            f"{svc} outage cause",
            "project",
            f"The {month} incident in {svc} was caused by {cause}.\nThe "
            "postmortem asks for an alert on it.\n",
            day,
        )
    lib, other = rng.choice(LIBS)
    return Mem(f"{slug}.md", f"{svc.title()} library choice", f"in {svc} prefer {lib} over {other}",
               "feedback", f"In {svc}, prefer {lib} over {other}.\n**Why:** {who} standardised on "
               f"it.\n", day)  # fmt: skip


def _reword(rng: random.Random, mem: Mem, rel: str, day: dt.date) -> Mem:
    body = mem.body
    for a, b in SYNONYMS.items():
        body = body.replace(a, b)
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if len(lines) > 1 and rng.random() < 0.5:
        lines = [lines[1], lines[0], *lines[2:]]
    if rng.random() < 0.5:
        lines.append(rng.choice(["Confirmed again this quarter.", "Noted during onboarding.",
                                 "Mentioned in the team sync."]))  # fmt: skip
    desc = mem.description
    for a, b in SYNONYMS.items():
        desc = desc.replace(a, b)
    name = rng.choice([mem.name + " (notes)", "About " + mem.name.lower(), mem.name + " again"])
    return Mem(rel, name, desc, mem.type, "\n".join(lines) + "\n", day)


def _contradict(rng: random.Random, mem: Mem, rel: str, day: dt.date, explicit: bool) -> Mem:
    old = mem.facts["value"]
    if "db" in mem.facts:
        versions = [v for v in json.loads(mem.facts["versions"]) if f"{mem.facts['db']} {v}" != old]
        new = f"{mem.facts['db']} {rng.choice(versions)}"
    else:
        new = str(int(old) + rng.choice([1, 10, 100]))
    cue = rng.choice(CORRECTION_CUES) if explicit else ""
    first = mem.body.splitlines()[0].replace(old, new)
    tail = f" (no longer {old})" if explicit and rng.random() < 0.5 else ""
    if cue:
        first = first[0].lower() + first[1:]
    body = f"{cue}{first}{tail}\n"
    return Mem(rel, mem.name + " now", mem.description.replace(old, new), mem.type, body, day)


def build(root: Path, seed: int = 7) -> dict[str, object]:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    start = dt.date(2026, 6, 1)
    mems: list[Mem] = []
    for svc in SERVICES:
        for kind in range(11):
            if kind == 10:
                kind = rng.choice([1, 6])  # a second value-bearing fact for some services
                if any(m.rel == f"{svc}_{kind}.md" for m in mems):
                    continue
            mems.append(_base(rng, svc, kind, start + dt.timedelta(days=rng.randint(0, 60))))
    base = list(mems)
    truth_dups: list[list[str]] = []
    for i, orig in enumerate(rng.sample(base, 25)):
        copy = Mem(f"copy_{i}_{orig.rel}", orig.name, orig.description, orig.type, orig.body,
                   orig.date + dt.timedelta(days=rng.randint(1, 30)))  # fmt: skip
        mems.append(copy)
        truth_dups.append([orig.rel, copy.rel])
    taken = {r for g in truth_dups for r in g}
    for i, orig in enumerate(rng.sample([m for m in base if m.rel not in taken], 35)):
        near = _reword(
            rng, orig, f"near_{i}_{orig.rel}", orig.date + dt.timedelta(days=rng.randint(1, 30))
        )
        mems.append(near)
        truth_dups.append([orig.rel, near.rel])
    taken |= {r for g in truth_dups for r in g}
    valued = [m for m in base if "value" in m.facts and m.rel not in taken]
    truth_contra: list[dict[str, object]] = []
    for i, orig in enumerate(rng.sample(valued, min(20, len(valued)))):
        explicit = i % 2 == 0
        later_day = orig.date + dt.timedelta(days=rng.randint(5, 40))
        later = _contradict(rng, orig, f"update_{i}_{orig.rel}", later_day, explicit)
        mems.append(later)
        truth_contra.append({"older": orig.rel, "newer": later.rel, "explicit": explicit})
    relative = rng.sample([m for m in mems if m.rel not in taken], 30)
    for m in relative:
        m.body = m.body.rstrip("\n") + f"\nReviewed {rng.choice(RELATIVE)} with the team.\n"
    for m in mems:
        path = root / m.rel
        path.write_text(m.text(), encoding="utf-8")
        stamp = dt.datetime.combine(m.date, dt.time(12)).timestamp()
        os.utime(path, (stamp, stamp))
    index_lines = ["# Memory index", ""]
    listed = rng.sample(mems, len(mems) - 20)  # 20 memories missing from the index
    for m in listed:
        hook = m.description
        if rng.random() < 0.1:
            hook += " — " + " ".join(["with far too much detail for an index line"] * 3)
        index_lines.append(f"- [{m.name}]({m.rel}) — {hook}")
    index_lines += [f"- [Old note {i}](old_note_{i}.md) — removed long ago" for i in range(15)]
    index_lines += [f"- [{m.name}]({m.rel}) — listed twice" for m in rng.sample(listed, 10)]
    (root / "MEMORY.md").write_text("\n".join(index_lines) + "\n", encoding="utf-8")
    truth = {
        "seed": seed,
        "memories": len(mems),
        "duplicates": truth_dups,
        "contradictions": truth_contra,
        "relative_dates": [m.rel for m in relative],
        "index_lines": len(index_lines),
        "unindexed": sorted({m.rel for m in mems} - {m.rel for m in listed}),
    }
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    truth = build(args.dir, args.seed)
    (args.dir.parent / "truth.json").write_text(json.dumps(truth, indent=1))
    print(f"{truth['memories']} memories in {args.dir}; truth in {args.dir.parent / 'truth.json'}")


if __name__ == "__main__":
    main()
