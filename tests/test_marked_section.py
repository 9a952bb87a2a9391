"""memdir's section in a file people own: replaced in place, removed byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir import marked_section
from memdir.errors import BundleError

BODY = "## Standing instructions\n\n- **Use real DBs**: no mocks\n"
ORIGINALS = {
    "empty file": "",
    "no final newline": "# Project\n\nhello",
    "final newline": "# Project\n\nhello\n",
    "blank line at the end": "# Project\n\n",
    "CRLF": "# Project\r\n\r\nhello\r\n",
    "CRLF without final newline": "# Project\r\nhello",
    "BOM": "\ufeff# Projet\n",
    "CJK": "# 项目\n\n说明\n",
}


@pytest.mark.parametrize("original", ORIGINALS.values(), ids=ORIGINALS.keys())
def test_remove_gives_back_the_file_as_it_was(original: str) -> None:
    written = marked_section.upsert(original, BODY)
    assert written.startswith(original)
    assert marked_section.remove(written) == original


def test_a_file_memdir_created_is_deleted_on_removal() -> None:
    written = marked_section.upsert(None, BODY)
    assert marked_section.NEW_FILE in written.splitlines()[0]
    assert marked_section.remove(written) is None


def test_a_rerun_replaces_the_section_in_place_and_keeps_everything_around_it() -> None:
    first = marked_section.upsert("# Top\n", BODY)
    moved = "# Intro\n\n" + first + "\n## After, written by the user\n"
    second = marked_section.upsert(moved, "## Standing instructions\n\n- new\n")
    assert second.startswith("# Intro\n\n# Top\n\n")
    assert second.endswith(
        "<!-- <<< memdir standing instructions -->\n\n## After, written by the user\n"
    )
    assert "- new" in second and "Use real DBs" not in second
    assert marked_section.upsert(second, "## Standing instructions\n\n- new\n") == second


def test_crlf_files_keep_crlf() -> None:
    written = marked_section.upsert("a\r\nb\r\n", BODY)
    assert "\n" not in written.replace("\r\n", "")


@pytest.mark.parametrize(
    "broken",
    [
        "x\n" + marked_section.begin_line(frozenset()) + "\nno end\n",
        "x\n" + marked_section.END_LINE + "\n",
        marked_section.END_LINE + "\n" + marked_section.begin_line(frozenset()) + "\n",
        marked_section.upsert("a\n", BODY) + marked_section.upsert("", BODY),
    ],
    ids=["begin without end", "end without begin", "end before begin", "two sections"],
)
def test_broken_markers_are_refused_not_guessed(broken: str) -> None:
    with pytest.raises(BundleError, match="fix them by hand"):
        marked_section.upsert(broken, BODY)
    with pytest.raises(BundleError, match="fix them by hand"):
        marked_section.remove(broken)


def test_markers_count_only_at_the_start_of_a_line() -> None:
    text = "quoting memdir: `  " + marked_section.END_LINE + "`\n"
    assert marked_section.find(text) is None
    assert marked_section.remove(marked_section.upsert(text, BODY)) == text


@given(
    st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r"),
        max_size=200,
    ),
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=200),
)
def test_remove_after_upsert_is_the_identity(original: str, body: str) -> None:
    if "<!--" in original:
        return  # a file holding marker-like lines is covered by the broken-marker tests
    assert marked_section.remove(marked_section.upsert(original, body)) == original
