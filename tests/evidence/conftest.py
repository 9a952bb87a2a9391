"""A real git repository whose code changes after a memory about it was written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

T0 = 1_780_000_000  # 2026-05-28: the first commit
DAY = 86_400


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = T0
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "dev@example.com")
        self.git("config", "user.name", "Dev")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str) -> str:
        stamp = f"@{self.clock} +0000"
        env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        out = subprocess.run(
            ["git", "-C", str(self.root), *args],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def commit(self, message: str, files: dict[str, str | None]) -> str:
        """Write (or, for None, delete) files and commit them a day after the last commit."""
        self.clock += DAY
        for rel, text in files.items():
            if text is None:
                self.git("rm", "-q", "-r", rel)
            else:
                self.write(rel, text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def written_now(self, memory: Path) -> None:
        """Date a memory file between the last commit and the next one."""
        when = self.clock + DAY // 2
        os.utime(memory, (when, when))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


DB_V1 = '''import psycopg2


def connect_db(url):
    """Open a connection."""
    return psycopg2.connect(url)


def close_db(conn):
    conn.close()
'''

DB_V2 = """import asyncpg


async def connect_db(url):
    return await asyncpg.create_pool(url)


def close_db(conn):
    conn.close()
"""
