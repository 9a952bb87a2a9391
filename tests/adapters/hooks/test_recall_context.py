"""The prompt hook recalls with the transcript's context: a file just read is evidence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost
from tests.test_prompt_context import seed_admin_rule


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path)
    seed_admin_rule(MemoryStore(fake.memory_dir))
    yield fake
    fake.stop_daemon()


def test_a_manifest_just_read_makes_the_package_rule_apply(host: FakeHost) -> None:
    # One word of the dependency situation ("module") and no class of task on its own
    # (memdir.recall.intents): the manifest just read is the second word.
    prompt = "Which date-picker module is best?"
    cold = host.session()
    cold.reply("Hello.")
    assert "admin_ui_package_manager.md" not in cold.prompt(prompt).context
    warm = host.session()
    warm.reply("Here is the manifest.", read=host.project / "admin" / "package.json")
    run = warm.prompt(prompt)
    assert run.code == 0
    assert "admin_ui_package_manager.md" in run.context
