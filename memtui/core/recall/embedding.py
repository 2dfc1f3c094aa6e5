"""The static embedding model behind the semantic selector: WordLlama, loaded from its wheel.

**Model**: WordLlama ``l2_supercat`` at 256 dimensions (PyPI ``wordllama`` 0.4.0, MIT): a table
of one 256-dimension vector per token of Llama 2's 32,000-token vocabulary (a 16 MB float16
safetensors file inside the wheel). A text's embedding is the mean of its tokens' vectors,
L2-normalised — what ``WordLlamaInference.embed(texts, norm=True)`` computes. Chosen over a
multilingual static model, the multilingual Universal Sentence Encoder and multilingual-e5-small
for its quality on English meaning at ~0.1 ms per memory (``benchmarks/embedding_compare.py``
and its README section have the comparison); its vocabulary is English-centric (Chinese and
Japanese characters are single tokens or bytes), which the semantic selector accounts for.

**Loading**: memtui reads the two files straight from the installed package by path
(``importlib.util.find_spec``, which does not import it) with ``safetensors`` and ``tokenizers``,
wordllama's own dependencies. Nothing is downloaded, ever: importing ``wordllama`` itself would
cost ~1 s (its pydantic configuration), set the root logger to INFO (``logging.basicConfig`` in
``wordllama.inference``), and its ``WordLlama.load`` looks for the tokenizer under
``tokenizer/`` while the 0.4.0 wheel ships ``tokenizers/`` — then tries a download from the
model hub. ``HF_HUB_OFFLINE=1`` is set (unless already set) before the tokenizer is read, so
no Hugging Face code in this process goes to the network either.

The model is loaded on first use only (``load_model``): the Memories pane, ``memtui ls`` and the
lexical selector never import this module's dependencies.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

# The package and the files of the model inside it (wordllama 0.4.0's wheel layout).
PACKAGE = "wordllama"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
TENSOR_KEY = "embedding.weight"
# memtui's choice: texts tokenized per step of ``embed`` (the tokenizer's encodings of one step
# are alive at once, whatever the number of texts). Each text's mean is one gather and one sum
# of its own rows: ``np.add.reduceat`` over a step's rows was ~20× slower.
TEXTS_PER_BATCH = 1_024


class ModelUnavailableError(RuntimeError):
    """The embedding model cannot be loaded (the package or its files are missing or damaged);
    the message says which file and why."""


@dataclass(frozen=True, slots=True)
class StaticModel:
    """A static embedding model: ``model_id`` (package, version and model: part of every cache
    key), ``table`` (vocabulary × dimensions, float32) and the ``tokenizers.Tokenizer``."""

    model_id: str
    table: np.ndarray
    tokenizer: Any

    @property
    def dimensions(self) -> int:
        """Length of every embedding."""
        return int(self.table.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The embeddings of ``texts``: a ``(len(texts), dimensions)`` float32 array of unit
        rows (the mean of the tokens' vectors, L2-normalised); a text without a token gets a
        row of zeros (its similarity to anything is 0)."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        last = self.table.shape[0] - 1
        for first in range(0, len(texts), TEXTS_PER_BATCH):
            batch = [_encodable(t) for t in texts[first : first + TEXTS_PER_BATCH]]
            for row, encoding in enumerate(self.tokenizer.encode_batch(batch, add_special_tokens=False), first):
                ids = encoding.ids
                if ids:
                    tokens = np.clip(np.asarray(ids, dtype=np.int64), 0, last)
                    out[row] = self.table[tokens].sum(axis=0) / np.float32(len(ids))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _encodable(text: str) -> str:
    """``text`` as the tokenizer accepts it: a lone surrogate (a file name or text read with
    ``surrogateescape`` from bytes that are not UTF-8) becomes ``?``; the tokenizer refuses the
    whole batch otherwise."""
    if text.isascii():
        return text
    return text.encode("utf-8", "replace").decode("utf-8")


def package_dir() -> Path:
    """Where the ``wordllama`` package is installed (found without importing it). Raises
    ``ModelUnavailableError`` when it is not."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError) as exc:
        raise ModelUnavailableError(f"the {PACKAGE} package cannot be found: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(f"the {PACKAGE} package is not installed (pip install {PACKAGE})")
    return Path(list(spec.submodule_search_locations)[0])


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return "?"


@cache
def load_model() -> StaticModel:
    """The WordLlama model from the installed wheel (loaded once per process, ~0.2 s). Raises
    ``ModelUnavailableError`` with the file and the reason when it cannot be read."""
    base = package_dir()
    weights, tokenizer_file = base / WEIGHTS, base / TOKENIZER
    for path in (weights, tokenizer_file):
        if not path.is_file():
            raise ModelUnavailableError(f"{path} is missing: reinstall {PACKAGE} (its wheel ships the model)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with safe_open(str(weights), framework="np") as f:
            table = np.ascontiguousarray(f.get_tensor(TENSOR_KEY), dtype=np.float32)
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:  # noqa: BLE001 - a damaged file, whatever the library raises
        raise ModelUnavailableError(f"the model in {base} cannot be read: {type(exc).__name__}: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    if table.ndim != 2 or table.shape[0] < tokenizer.get_vocab_size():
        raise ModelUnavailableError(f"{weights}: unexpected table shape {table.shape}")
    return StaticModel(f"{PACKAGE}-{_version()}/l2_supercat_256", table, tokenizer)
