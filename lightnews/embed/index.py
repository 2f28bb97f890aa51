"""Embed: the vector index, nearest papers by meaning in milliseconds.

On PostgreSQL the database is the index (:class:`DatabaseVectorIndex`):
pgvector's HNSW index per encoder, shared by every process, nothing kept
beside it. On SQLite, a FAISS index over the vectors in the database, saved beside it
(``<db>.<encoder>.faiss``) so a process does not rebuild it on start. Small
libraries get an exact index; past ``EXACT_UP_TO`` vectors an inverted-file
index (k-means lists, a few probed per query) keeps a query to milliseconds at
a million papers. Vectors are held as float16, as they are stored.

The index remembers the newest vector row it has seen; any process catches
up on newer rows with one cheap query before it answers, so the index is
never more than a query behind the database. It is derived data: deleting
the file only costs a rebuild.
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightnews.store import Store

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["DatabaseVectorIndex", "VectorIndex", "from_blob", "to_blob"]

EXACT_UP_TO = 20_000
PROBES = 24
_FORMAT = 1


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:

    return bytes(vector.astype("<f2").tobytes())


def from_blobs(blobs: list[bytes], dim: int) -> npt.NDArray[np.float32]:
    import numpy as np

    return np.frombuffer(b"".join(blobs), dtype="<f2").reshape(-1, dim).astype(np.float32)


def from_blob(blob: bytes) -> npt.NDArray[np.float32]:
    """One stored vector (float16 bytes, two per dimension) as float32."""
    return from_blobs([blob], len(blob) // 2)[0]


class VectorIndex:
    """Papers' vectors from one encoder, searchable by inner product."""

    def __init__(self, model: str, dim: int, index: Any, seen: int, built_for: int) -> None:
        self.model = model
        self.dim = dim
        self._index = index
        self.seen = seen  # newest vector row id in the index
        self.built_for = built_for  # vectors the index's layout was chosen for
        self._lock = threading.Lock()

    # -- building and keeping up -----------------------------------------------

    @staticmethod
    def _layout(count: int, dim: int) -> Any:
        import faiss

        if count <= EXACT_UP_TO:
            return faiss.index_factory(dim, "IDMap2,SQfp16", faiss.METRIC_INNER_PRODUCT)
        lists = int(math.sqrt(count) * 1.5)
        index: Any = faiss.index_factory(dim, f"IVF{lists},SQfp16", faiss.METRIC_INNER_PRODUCT)
        index.nprobe = PROBES
        return index

    @classmethod
    def build(cls, store: Store, model: str, dim: int) -> VectorIndex:
        """An index of every vector of ``model`` in ``store``."""
        import faiss
        import numpy as np

        count = store.vector_count(model)
        index = cls._layout(count, dim)
        seen = 0
        if count > EXACT_UP_TO:
            faiss.omp_set_num_threads(max(1, os.cpu_count() or 1))
            # Train the lists on an even sample of the library.
            step = max(1, count // (index.nlist * 40))
            sample = []
            for chunk in store.vectors_after(model, 0):
                sample.append(from_blobs([blob for _, _, blob in chunk[::step]], dim))
            index.train(np.concatenate(sample))
        built = cls(model, dim, index, seen, count)
        built.catch_up(store)
        return built

    def catch_up(self, store: Store) -> int:
        """Add the vectors written since this index last looked; how many were added."""
        import numpy as np

        if store.last_vector_row() <= self.seen:
            return 0
        added = 0
        with self._lock:
            for chunk in store.vectors_after(self.model, self.seen):
                ids = np.fromiter((paper_id for _, paper_id, _ in chunk), dtype=np.int64)
                # A paper embedded again replaces its old vector.
                self._index.remove_ids(ids)
                self._index.add_with_ids(from_blobs([b for _, _, b in chunk], self.dim), ids)
                self.seen = chunk[-1][0]
                added += len(chunk)
            self.seen = max(self.seen, store.last_vector_row())
        return added

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    def outgrown(self) -> bool:
        """True when the layout no longer suits the size (rebuild then)."""
        if self.built_for <= EXACT_UP_TO:
            return self.size > EXACT_UP_TO
        return self.size > 4 * self.built_for

    # -- asking -----------------------------------------------------------------

    def search(self, vector: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest papers as ``(paper id, cosine similarity)``, nearest first."""
        if k <= 0 or self.size == 0:
            return []
        import faiss

        with self._lock:
            # One query is not worth a thread team: on a busy two-CPU machine
            # OpenMP's threads cost 70 ms where one thread takes 4 (building
            # sets its own count again).
            faiss.omp_set_num_threads(1)
            scores, ids = self._index.search(vector.reshape(1, -1), min(k, self.size))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    # -- on disk ------------------------------------------------------------------

    @staticmethod
    def paths(db_path: Path, model: str) -> tuple[Path, Path]:
        base = f"{db_path}.{model}"
        return Path(base + ".faiss"), Path(base + ".json")

    def save(self, db_path: Path) -> None:
        """Write the index beside the database (atomically: readers never see half)."""
        import faiss
        from filelock import FileLock

        index_path, meta_path = self.paths(db_path, self.model)
        # Several processes of one library (two refreshes, web processes) may save at
        # once: each writes its own temporary files, and the index with its meta file
        # is replaced as a pair under a lock, so no reader pairs one's index with
        # another's meta (the meta says which vector rows the index holds).
        unique = f".{os.getpid()}.{threading.get_ident()}.tmp"
        with self._lock:
            faiss.write_index(self._index, str(index_path) + unique)
            meta = {
                "format": _FORMAT,
                "model": self.model,
                "dim": self.dim,
                "seen": self.seen,
                "built_for": self.built_for,
            }
        Path(str(meta_path) + unique).write_text(json.dumps(meta), encoding="utf-8")
        with FileLock(str(index_path) + ".lock"):
            os.replace(str(index_path) + unique, index_path)
            os.replace(str(meta_path) + unique, meta_path)

    @classmethod
    def load(cls, db_path: Path, model: str, dim: int) -> VectorIndex | None:
        """The saved index, if there is a usable one."""
        import faiss
        from filelock import FileLock

        index_path, meta_path = cls.paths(db_path, model)
        try:
            with FileLock(str(index_path) + ".lock"):  # the pair as one process saved it
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
                if (meta["format"], meta["model"], meta["dim"]) != (_FORMAT, model, dim):
                    return None
                index = faiss.read_index(str(index_path))
        except (OSError, ValueError, KeyError, RuntimeError):
            return None
        if hasattr(index, "nprobe"):
            index.nprobe = PROBES
        return cls(model, dim, index, int(meta["seen"]), int(meta["built_for"]))


class DatabaseVectorIndex:
    """The nearest papers from the database's own vector index (pgvector's HNSW).

    The same questions as :class:`VectorIndex`, asked of the store: every web
    process and worker shares the one index the database keeps current as
    vectors are written, so there is nothing to build, catch up or save.
    """

    def __init__(self, store: Store, model: str, dim: int) -> None:
        self.store = store
        self.model = model
        self.dim = dim
        self.seen = 0
        self.built_for = 0

    def search(self, vector: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest papers as ``(paper id, cosine similarity)``, nearest first."""
        return self.store.nearest_vectors(self.model, to_blob(vector), k)

    def exact(
        self, vector: npt.NDArray[np.float32], paper_ids: list[int]
    ) -> list[tuple[int, float]]:
        """Similarity to exactly these papers, nearest first (computed in the database)."""
        if not paper_ids:
            return []
        return self.store.nearest_vectors(
            self.model, to_blob(vector), len(paper_ids), among=paper_ids
        )

    def catch_up(self, store: Store) -> int:
        return 0  # the database's index is always current

    @property
    def size(self) -> int:
        return self.store.vector_count(self.model)

    def outgrown(self) -> bool:
        return False

    def save(self, db_path: Path) -> None:
        pass  # nothing beside the database

    @staticmethod
    def paths(db_path: Path, model: str) -> tuple[Path, Path]:
        return VectorIndex.paths(db_path, model)
