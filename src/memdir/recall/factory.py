"""Choose and build the recall engine for a memory dir.

``local`` (the offline default): hybrid BM25 + MiniLM over every memory. ``llm``: a side query to
the configured model, with its 200-entry manifest filled by the local ranker when the ``recall``
extra is installed (by recency otherwise). ``auto``: ``llm`` when a provider is given, else
``local``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from memdir.errors import ConfigError, MissingExtraError, ProviderConfigError
from memdir.llm.base import Provider
from memdir.recall.engine import MemoryRecall, Ranker
from memdir.recall.llm_select import LLMSelector
from memdir.scan import MAX_MEMORY_FILES

if TYPE_CHECKING:
    from memdir.recall.local import LocalSelector

SelectorKind = Literal["auto", "local", "llm"]
SELECTOR_KINDS: tuple[str, ...] = ("auto", "local", "llm")


def local_selector(
    memory_dir: Path,
    cache_dir: Path,
    *,
    min_similarity: float | str | None = "default",
    embedder: str = "auto",
    background: bool = True,
) -> LocalSelector:
    """The offline selector (imports numpy/onnxruntime lazily: the ``recall`` extra).

    ``embedder``: ``auto`` (MiniLM, or the multilingual model for a dir written mostly in other
    languages when the ``multilingual`` extra is installed), ``minilm`` or ``multilingual``.
    Its index has two stages (the fast one for MiniLM, see ``recall.search_index``); with
    ``background`` the model reads the rest of the dir in a thread after each refresh (for
    long-lived processes; a one-shot command passes False and leaves it to ``memdir reindex``).
    """
    try:
        from memdir.recall.local import LocalSelector
        from memdir.recall.multilingual import choose_embedder
    except ImportError as exc:
        raise MissingExtraError(exc.name or "numpy", "recall") from exc
    model = choose_embedder(memory_dir, embedder)
    if isinstance(min_similarity, str):
        return LocalSelector(
            memory_dir, cache_dir, embedder=model, fast="auto", background=background
        )
    return LocalSelector(
        memory_dir,
        cache_dir,
        embedder=model,
        min_similarity=min_similarity,
        fast="auto",
        background=background,
    )


def build_recall(
    memory_dir: Path,
    cache_dir: Path,
    *,
    kind: str = "auto",
    provider: Provider | None = None,
    min_similarity: float | Literal["default"] | None = "default",
    embedder: str = "auto",
    background: bool = True,
) -> MemoryRecall:
    """A recall engine for ``memory_dir``; keep it for the life of the process (see engine)."""
    if kind not in SELECTOR_KINDS:
        raise ConfigError(f"unknown recall selector {kind!r} (choose {', '.join(SELECTOR_KINDS)})")
    headers = cache_dir / "headers.json"
    if kind == "auto":
        kind = "llm" if provider is not None else "local"
    if kind == "llm":
        if provider is None:
            raise ProviderConfigError(
                "the llm selector needs a model: set MEMDIR_MODEL (e.g. anthropic:<model>, "
                "openai:<model>, llamacpp:/path/model.gguf)"
            )
        ranker: Ranker | None
        try:
            ranker = local_selector(memory_dir, cache_dir, embedder=embedder, background=background)
        except MissingExtraError:
            ranker = None
        return MemoryRecall(
            memory_dir,
            LLMSelector(provider),
            ranker=ranker,
            manifest_cap=MAX_MEMORY_FILES,
            header_cache=headers,
        )
    selector = local_selector(
        memory_dir,
        cache_dir,
        min_similarity=min_similarity,
        embedder=embedder,
        background=background,
    )
    return MemoryRecall(memory_dir, selector, header_cache=headers)
