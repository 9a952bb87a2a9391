"""Template files ship as package data and render strictly."""

from __future__ import annotations

from importlib import resources

import pytest

from memdir.prompts.templates import render, sections


@pytest.mark.parametrize("filename", ["shared.md", "modes.md"])
def test_templates_are_package_data(filename: str) -> None:
    assert resources.files("memdir.prompts").joinpath(filename).is_file()
    parsed = sections(filename)
    assert parsed
    assert all(body.strip() for body in parsed.values())
    assert not any("<!-- section" in body for body in parsed.values())


def test_missing_value_raises() -> None:
    with pytest.raises(KeyError):
        render("modes.md", "individual_intro")


def test_render_substitutes() -> None:
    assert "`/x/y`" in render("modes.md", "individual_intro", memory_dir="/x/y")
