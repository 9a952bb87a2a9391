"""Screenshots of the main pages for docs/ui/: ``python -m tests.ui.screenshots [out dir]``.

Builds a realistic memory dir (``benchmarks/messy_dir.py``: ~300 memories about 20 services,
with duplicates, contradictions and a drifted MEMORY.md), replays a short hook session, retires
one memory, then runs the real ``memdir ui`` and photographs it in Debian's headless Chromium.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from memdir.consolidate.forget import retire  # noqa: E402
from messy_dir import build  # noqa: E402
from tests.ui.browser import CHROMIUM, CHROMIUM_ARGS, running_ui  # noqa: E402
from tests.ui.conftest import Ui, replay_hooks  # noqa: E402

SHOTS = [
    ("memories", "/memories", 1280),
    ("memory", None, 1280),
    ("recall", "/recall?q=which+database+does+billing+use", 1280),
    ("session", "/sessions/demo-session-0001", 1280),
    ("dream", "/dream?plan=1", 1280),
    ("health", "/health", 1280),
    ("index", "/index", 1280),
    ("memories-narrow", "/memories", 420),
]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        ui = Ui(Path(tmp))
        build(ui.mem)
        first = sorted(p.name for p in ui.mem.glob("*.md") if p.name != "MEMORY.md")
        retire(ui.store, first[0], reason="the team moved this to the wiki")
        replay_hooks(
            ui,
            "demo-session-0001",
            ("session-start", {"source": "startup"}),
            ("user-prompt-submit", {"prompt": "which database does billing use?"}),
            ("user-prompt-submit", {"prompt": "who owns the auth service and when do we deploy"}),
            ("user-prompt-submit", {"prompt": "thanks"}),
            ("pre-compact", {"trigger": "auto"}),
        )
        with running_ui(ui) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            base = url.split("/?")[0]
            for name, where, width in SHOTS:
                page = browser.new_page(viewport={"width": width, "height": 800})
                page.goto(url)
                if where is None:
                    page.locator("table.list tbody a").nth(2).click()
                else:
                    page.goto(base + where)
                page.wait_for_load_state("load")
                page.screenshot(path=str(out / f"{name}.png"))
                page.close()
            browser.close()
    print(f"wrote {len(SHOTS)} screenshots to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "ui")
