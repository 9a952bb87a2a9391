"""``memdir ui`` on the command line: bad input is one line and exit 2; --host warns."""

from __future__ import annotations

import io
from pathlib import Path

import httpx

from memdir.cli.main import main
from tests.ui.browser import running_ui
from tests.ui.conftest import Ui


def test_a_bad_port_is_one_clear_error(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path)}
    code = main(
        ["--dir", "mem", "ui", "--port", "70000"], env=env, cwd=tmp_path, stdout=out, stderr=err
    )
    assert code == 2
    assert err.getvalue() == "memdir: error: --port must be 0-65535, not 70000\n"


def test_another_host_warns_and_answers_only_to_that_name(ui: Ui) -> None:
    ui.store.create("A", "first memory", "user", "body\n", rel="a.md")
    with running_ui(ui, "--host", "127.0.0.2") as url:
        assert url.startswith("http://127.0.0.2:")
        with httpx.Client(follow_redirects=True) as client:
            assert "first memory" in client.get(url).text
            port = url.split(":")[2].split("/")[0]
            refused = client.get(f"http://127.0.0.2:{port}/memories", headers={"Host": "localhost"})
            assert refused.status_code == 421
    assert "warning: listening on 127.0.0.2" in (ui.home / "ui.stderr").read_text()


def test_read_only_flag_reaches_the_app(ui: Ui) -> None:
    ui.store.create("A", "first memory", "user", "body\n", rel="a.md")
    with running_ui(ui, "--read-only") as url, httpx.Client(follow_redirects=True) as client:
        page = client.get(url).text
        assert "read-only" in page and "New memory" not in page
