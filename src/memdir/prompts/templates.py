"""Prompt wording lives in ``*.md`` package data, split into named sections.

A template file holds sections introduced by ``<!-- section: name -->`` lines; each section is a
:class:`string.Template` whose ``${names}`` are filled strictly (a missing value is a bug and
raises), so no placeholder can leak into a prompt. Wording changes never touch Python code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from importlib import resources
from string import Template

_SECTION = re.compile(r"^<!-- section: ([a-z_]+) -->\n", re.MULTILINE)


@functools.cache
def sections(filename: str) -> Mapping[str, str]:
    """Every named section of a template file, stripped of surrounding blank lines."""
    text = resources.files("memdir.prompts").joinpath(filename).read_text("utf-8")
    parts = _SECTION.split(text)
    return {name: body.strip("\n") for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def render(filename: str, name: str, **values: str) -> str:
    """One section with its ``${names}`` substituted (KeyError if a value is missing)."""
    return Template(sections(filename)[name]).substitute(values)
