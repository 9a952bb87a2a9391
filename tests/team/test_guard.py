"""The team write guard: credentials are refused on the way into team memory, nothing written."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memdir.errors import SecretFoundError
from memdir.store import MemoryStore
from memdir.team.guard import check_team_write, is_team_path, team_secret_guard
from memdir.team.secrets import RULES_BY_ID
from tests.team.samples import SPECS

AWS_LABEL = RULES_BY_ID["aws-access-token"].label


@pytest.fixture
def aws_key() -> str:
    return SPECS["aws-access-token"].token(random.Random(42))


@pytest.mark.parametrize(
    ("rel", "in_team"),
    [
        ("team/x.md", True),
        ("team/sub/dir/x.md", True),
        ("./team/x.md", True),
        ("team//x.md", True),
        ("Team/x.md", True),  # same directory on case-insensitive file systems
        ("TEAM/MEMORY.md", True),
        ("private/../team/x.md", True),
        ("team", True),
        ("x.md", False),
        ("teammate.md", False),
        ("team-evil/x.md", False),
        ("teams/x.md", False),
        ("notes/team/x.md", False),
    ],
)
def test_which_paths_are_team_paths(rel: str, in_team: bool, aws_key: str) -> None:
    assert is_team_path(rel) is in_team
    text = f"---\nname: creds\n---\nthe key is {aws_key}\n"
    if in_team:
        with pytest.raises(SecretFoundError) as info:
            check_team_write(rel, text)
        assert info.value.labels == [AWS_LABEL]
        assert info.value.path == rel
    else:
        check_team_write(rel, text)


def test_refusal_names_labels_never_the_value(aws_key: str) -> None:
    gh = SPECS["github-pat"].token(random.Random(1))
    with pytest.raises(SecretFoundError) as info:
        team_secret_guard()("team/notes.md", f"{aws_key}\n{gh}\n{aws_key}\n")
    exc = info.value
    assert exc.labels == [AWS_LABEL, RULES_BY_ID["github-pat"].label]
    for leak in (str(exc), repr(exc), repr(exc.args), repr(vars(exc))):
        assert aws_key not in leak and gh not in leak
    assert AWS_LABEL in str(exc)


def test_clean_team_text_passes() -> None:
    check_team_write("team/notes.md", "Deploys go through the staging cluster first.\n")


def test_custom_team_prefix(aws_key: str) -> None:
    guard = team_secret_guard("shared/team/")
    guard("team/x.md", aws_key)  # not the team dir under this layout
    with pytest.raises(SecretFoundError):
        guard("shared/team/x.md", aws_key)


def test_symlinked_route_into_team_dir_is_scanned_with_root(tmp_path: Path, aws_key: str) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "link").symlink_to(tmp_path / "team")
    team_secret_guard()("notes/link/x.md", aws_key)  # without the root it cannot know
    with pytest.raises(SecretFoundError):
        team_secret_guard(root=tmp_path)("notes/link/x.md", aws_key)
    team_secret_guard(root=tmp_path)("notes/x.md", aws_key)


def _body(key: str) -> str:
    return f"The staging deploy uses {key} for the artifact bucket.\n"


def test_store_refuses_planted_key_in_team_memory(tmp_path: Path, aws_key: str) -> None:
    store = MemoryStore(tmp_path, guards=[team_secret_guard(root=tmp_path)])
    with pytest.raises(SecretFoundError) as info:
        store.create(
            "Staging creds",
            "how deploys authenticate",
            "project",
            _body(aws_key),
            rel="team/staging.md",
        )
    assert info.value.labels == [AWS_LABEL]
    assert not (tmp_path / "team" / "staging.md").exists()
    assert not (tmp_path / "team" / "MEMORY.md").exists()
    with pytest.raises(SecretFoundError):
        store.write_text("team/raw.md", _body(aws_key))
    assert not (tmp_path / "team" / "raw.md").exists()


def test_store_refuses_an_edit_that_adds_a_key(tmp_path: Path, aws_key: str) -> None:
    store = MemoryStore(tmp_path, guards=[team_secret_guard(root=tmp_path)])
    store.create(
        "Staging",
        "how deploys authenticate",
        "project",
        _body("a vault token"),
        rel="team/staging.md",
    )
    before = (tmp_path / "team" / "staging.md").read_bytes()
    with pytest.raises(SecretFoundError):
        store.edit("team/staging.md", "a vault token", aws_key)
    assert (tmp_path / "team" / "staging.md").read_bytes() == before


def test_store_allows_the_same_text_in_private_memory(tmp_path: Path, aws_key: str) -> None:
    store = MemoryStore(tmp_path, guards=[team_secret_guard(root=tmp_path)])
    memory = store.create("Staging creds", "how deploys authenticate", "project", _body(aws_key))
    assert aws_key in (tmp_path / memory.path).read_text()
    assert not memory.path.startswith("team/")


def test_documentation_examples_may_go_into_team_memory(tmp_path: Path, aws_key: str) -> None:
    """Regression (#8 item 10): vendors' placeholder keys made how-to notes unshareable."""
    store = MemoryStore(tmp_path, guards=[team_secret_guard(root=tmp_path)])
    howto = (
        "Configure the CLI with the documented sample values first:\n"
        f"  aws_access_key_id = {'AKIA' + 'IOSFODNN7EXAMPLE'}\n"
        f"  GITHUB_TOKEN={'gh' + 'p_' + 'x' * 36}\n"
    )
    store.create("AWS setup", "how to configure the AWS CLI", "reference", howto,
                 rel="team/aws.md")  # fmt: skip
    assert "EXAMPLE" in (tmp_path / "team" / "aws.md").read_text()
    with pytest.raises(SecretFoundError):
        store.create("Leak", "a real-looking key", "reference", f"key {aws_key}\n",
                     rel="team/leak.md")  # fmt: skip
    assert not (tmp_path / "team" / "leak.md").exists()
