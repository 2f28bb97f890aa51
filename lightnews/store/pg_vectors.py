"""Store: vectors on PostgreSQL, half precision in pgvector, an HNSW index per encoder.

Vectors are stored as ``halfvec`` and searched by cosine through an HNSW
index per encoder (:func:`vector_index_name`), built when an encoder's first
vectors arrive, set aside during a bulk embed and built once at its end
with the memory to hold its graph (:func:`hnsw_build_memory_mb`). Filters
and excluded words apply during the index scan (pgvector's iterative scan).
Which papers need vectors and reading them back is shared with SQLite
(:mod:`lightnews.store.vectors`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from lightnews.errors import UsageError
from lightnews.model import QueryTerm, SearchFilters
from lightnews.store.pg_connection import PostgresQueries, rollback
from lightnews.store.pg_search import tsquery_sql
from lightnews.store.search_common import SearchQueries
from lightnews.store.vectors import VectorQueries

__all__ = [
    "BULK_VECTORS",
    "HNSW_EF_SEARCH",
    "INDEX_MEMORY_MB",
    "ITERATIVE_SCAN_CAP",
    "PostgresVectors",
    "hnsw_build_memory_mb",
    "vector_index_name",
]


class PostgresVectors(PostgresQueries, SearchQueries, VectorQueries):
    """The HNSW index of each encoder's vectors, kept and searched."""

    vectors_indexed = True

    def save_vectors(self, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
        if rows and model not in self.__dict__.get("_vectors_deferred", set()):
            self.ensure_vector_index(model, len(rows[0][1]) // 2)
        super().save_vectors(model, rows)

    def ensure_vector_index(self, model: str, dim: int, memory_mb: int | None = None) -> bool:
        """The HNSW index (cosine) over this encoder's vectors, built if missing; whether
        it was built now.

        Made when an encoder's first vectors arrive (an empty index that every
        saved vector then joins), or over vectors already stored (a bulk embed
        set it aside, a library copied in, a build interrupted): then it is
        built at once, with ``maintenance_work_mem`` sized to hold the whole
        graph (:func:`hnsw_build_memory_mb`, at most ``memory_mb``, the
        ``index_build_memory`` setting). pgvector builds the graph in memory
        and, once it outgrows that memory, goes on inserting tuple by tuple
        into the index on disk, many times slower: a million 384-dimension
        vectors did not finish in 21 minutes in 256 MB (docs/benchmarks.md).
        The server's ``max_parallel_maintenance_workers`` share the build; if
        the server cannot give a parallel build its shared memory (a container's
        small ``/dev/shm``), the build is done again in one process. Writers of
        vectors wait while it runs; readers do not.
        """
        import psycopg

        known: set[tuple[str, int]] = self.__dict__.setdefault("_vector_indexes", set())
        if (model, dim) in known:
            return False
        name = vector_index_name(model, dim)
        db = self.db
        if db.execute("SELECT to_regclass(?)", (name,)).fetchone()[0] is not None:
            known.add((model, dim))
            return False
        rows = int(
            db.execute("SELECT count(*) FROM paper_vectors WHERE model = ?", (model,)).fetchone()[0]
        )
        cap = INDEX_MEMORY_MB if memory_mb is None else memory_mb
        create = (
            f"CREATE INDEX IF NOT EXISTS {name} ON paper_vectors "
            f"USING hnsw ((vector::halfvec({dim})) halfvec_cosine_ops) "
            f"WHERE model = {_model_literal(model)}"
        )
        db.execute(f"SET maintenance_work_mem = '{hnsw_build_memory_mb(rows, dim, cap)}MB'")
        try:
            try:
                db.execute(create)
            except (psycopg.errors.DiskFull, psycopg.errors.OutOfMemory):
                if db.in_transaction:
                    raise
                # No shared memory for a parallel build: the graph in this process's own.
                db.execute("SET max_parallel_maintenance_workers = 0")
                db.execute(create)
        finally:
            if not db.conn.closed:
                db.execute("RESET maintenance_work_mem; RESET max_parallel_maintenance_workers")
        known.add((model, dim))
        return True

    def ensure_vector_indexes(self, memory_mb: int | None = None) -> list[str]:
        """:meth:`ensure_vector_index` for every encoder whose vectors are stored (a
        library copied in); the names of the indexes built now."""
        built = []
        for model, dim in self.db.execute(
            "SELECT model, max(vector_dims(vector)) FROM paper_vectors GROUP BY model"
        ).fetchall():
            if self.ensure_vector_index(model, int(dim), memory_mb):
                built.append(vector_index_name(model, int(dim)))
        return built

    @contextmanager
    def vectors_in_bulk(
        self, model: str, dim: int, expected: int, memory_mb: int | None = None
    ) -> Iterator[None]:
        """About ``expected`` vectors of ``model`` are saved in this block.

        When they are many (at least ``BULK_VECTORS``) and more than the
        encoder holds already, the HNSW index is set aside and built once at
        the end, with the memory to hold its graph: pgvector's own advice (an
        index built over the rows is faster than the rows inserted one by one
        into it), and the same as a bulk import does with the full-text index.
        Searches by meaning read every vector meanwhile (slow, but right). An
        embed stopped half way leaves the index to the next save or embed,
        which builds it (:meth:`ensure_vector_index`).
        """
        defer = expected >= BULK_VECTORS and expected > self.vector_count(model)
        deferred: set[str] = self.__dict__.setdefault("_vectors_deferred", set())
        if defer:
            self.db.execute(f"DROP INDEX IF EXISTS {vector_index_name(model, dim)}")
            self.__dict__.setdefault("_vector_indexes", set()).discard((model, dim))
            deferred.add(model)
        try:
            yield
        finally:
            deferred.discard(model)
        if self.has_vectors(model):
            self.ensure_vector_index(model, dim, memory_mb)

    def nearest_vectors(
        self,
        model: str,
        vector: bytes,
        k: int,
        *,
        filters: SearchFilters | None = None,
        excluded: Sequence[QueryTerm] = (),
        among: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` papers nearest ``vector`` by cosine, nearest first, from pgvector.

        The encoder's HNSW index answers (see :meth:`ensure_vector_index`: the
        query repeats its expression and its ``model = '...'`` predicate, so the
        planner can use it). Filters and excluded words are applied during the
        index scan: pgvector's iterative scan (0.8) reads on past the first
        ``hnsw.ef_search`` candidates until ``k`` pass them, up to
        ``ITERATIVE_SCAN_CAP`` index tuples, so a filter that most papers pass
        costs little and a rare one is bounded (narrow filters come with
        ``among``, the ids the filter allows, and are ranked exactly).
        """
        if k <= 0:
            return []
        dim = len(vector) // 2
        if not re.fullmatch(r"[\w.:-]+", model) or dim <= 0:
            return []
        distance = f"(v.vector::halfvec({dim}) <=> ?::halfvec({dim}))"
        query_vector = self.sql.vector_in(vector)
        params: list[Any] = []
        where = f"v.model = {_model_literal(model)}"
        if among is not None:
            # Exactly: "+ 0" keeps the planner off the index (an approximate scan
            # could miss allowed papers that the filter makes rare).
            where += f" AND {self.sql.in_list('v.paper_id')}"
            params.append(self.sql.list_param(int(i) for i in among))
            order = f"{distance} + 0"
        else:
            order = distance
            filter_sql, filter_args = self._search_filters(filters)
            paper = filter_sql
            params += filter_args
            if excluded:
                query = tsquery_sql([QueryTerm(t.words, t.prefix) for t in excluded])
                if query is not None:
                    tsquery, more = query
                    paper += " AND NOT p.search @@ " + tsquery.replace(" && ", " || ")
                    params += more
            if paper:
                # Each candidate the index scan yields is looked up by its id (the
                # OFFSET keeps the planner from making this a join: it guesses the
                # filter passes a handful of papers and would loop over all of them
                # for every candidate).
                where += (
                    f" AND EXISTS (SELECT 1 FROM papers p WHERE p.id = v.paper_id {paper} OFFSET 0)"
                )
        # The scan may give its rows slightly out of order (relaxed_order): sort again.
        sql = (
            f"WITH n AS MATERIALIZED (SELECT v.paper_id, {distance} AS d FROM paper_vectors v "
            f"WHERE {where} ORDER BY {order} LIMIT ?) "
            "SELECT paper_id, 1 - d FROM n ORDER BY d, paper_id"
        )
        db = self.db
        owned = not db.in_transaction
        ef_search = min(max(k, HNSW_EF_SEARCH), 1000)
        # Unfiltered, or a filter known to pass many papers (a narrow one comes as
        # ``among``): the index is the plan. The planner cannot know it (it guesses
        # ``categories LIKE`` passes a handful of rows and would read the papers
        # table whole to sort them), so sorting is ruled out for this query.
        settings = (
            f"SET LOCAL hnsw.ef_search = {ef_search}; "
            "SET LOCAL hnsw.iterative_scan = relaxed_order; "
            f"SET LOCAL hnsw.max_scan_tuples = {ITERATIVE_SCAN_CAP}; "
            + ("" if among is not None else "SET LOCAL enable_sort = off; ")
        )
        try:  # one round trip for the settings (a query is a few milliseconds)
            db.execute(("BEGIN; " if owned else "") + settings)
            rows = db.execute(sql, [query_vector, *params, query_vector, k]).fetchall()
        except BaseException:
            if owned:
                rollback(db)
            raise
        if owned:
            db.execute("COMMIT")
        return [(int(r[0]), float(r[1])) for r in rows]


def vector_index_name(model: str, dim: int) -> str:
    """The name of the HNSW index over ``model``'s vectors of ``dim`` dimensions."""
    return "paper_vectors_hnsw_" + re.sub(r"\W", "_", model.lower()) + f"_{dim}"


def hnsw_build_memory_mb(rows: int, dim: int, cap_mb: int) -> int:
    """``maintenance_work_mem`` in MB for building an HNSW index over ``rows`` vectors of
    ``dim`` dimensions in memory, at most ``cap_mb`` (and at least PostgreSQL's 64).

    pgvector keeps, per vector, its half-precision value (2 bytes a dimension)
    and its element with neighbour lists (m = 16: 32 neighbours on the bottom
    layer at 16 bytes each, a few on the layers above, the element's own
    header): under 1 kB beside the value. ``HNSW_ELEMENT_BYTES`` rounds that up,
    and a tenth more is kept for the allocator, so a build sized here does
    not spill to disk. A parallel build reserves all of it in shared memory
    at the start, so it is sized to the rows, not set high once and for all.
    """
    need = rows * (2 * dim + HNSW_ELEMENT_BYTES) * 1.1 / 2**20 + 16
    return max(64, min(int(cap_mb), math.ceil(need)))


def _model_literal(model: str) -> str:
    """An encoder name as an SQL literal (the index predicate must be a constant)."""
    if not re.fullmatch(r"[\w.:-]+", model):
        raise UsageError(f"not an encoder name: {model!r}")
    return "'" + model + "'"


#: Candidates an HNSW scan keeps (``hnsw.ef_search``; more when more results are asked):
#: pgvector's default of 40 is below the 50-100 a hybrid search asks for.
HNSW_EF_SEARCH = 100
#: Most index tuples an iterative scan reads for a filtered search (pgvector's default).
ITERATIVE_SCAN_CAP = 20_000


#: Default cap of the memory an HNSW build may use, in MB (the ``index_build_memory``
#: setting): a million 384-dimension vectors need about 1.8 GB.
INDEX_MEMORY_MB = 2048
#: Bytes an HNSW graph element needs beside its vector (see ``hnsw_build_memory_mb``).
HNSW_ELEMENT_BYTES = 1024
#: Vectors from which a bulk embed sets the HNSW index aside (``vectors_in_bulk``).
BULK_VECTORS = 10_000
