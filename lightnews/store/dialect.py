"""Store: the few places where SQLite and PostgreSQL spell the same query differently.

The store's queries are written once, in the SQL both engines read (``?``
placeholders, ``INSERT ... ON CONFLICT``, ``RETURNING``); where the two differ
(a list given as one parameter, string aggregation, reading a JSON field,
vectors as bytes or as pgvector's half vectors) the
query asks its backend's :class:`Dialect` for the fragment. Full-text search,
vectors, transactions and migrations differ more than a fragment and are each
backend's own methods.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterable
from typing import Any

import orjson

__all__ = ["POSTGRES", "SQLITE", "Dialect"]


class Dialect:
    """SQLite's spelling; :class:`_Postgres` overrides what PostgreSQL spells otherwise."""

    name = "sqlite"
    #: A join the planner must take in the order written (SQLite's CROSS JOIN).
    join_in_order = "CROSS JOIN"
    #: What ends a SELECT of rows about to be rewritten in the same transaction, so that
    #: no other writer changes them in between: nothing on SQLite (one writer at a
    #: time), a row lock on PostgreSQL (writers side by side) that leaves the rows free
    #: to be referenced by a foreign key meanwhile.
    lock_rows = ""

    def in_list(self, column: str) -> str:
        """``column`` is one of the values of a list parameter (see :meth:`list_param`)."""
        return f"{column} IN (SELECT value FROM json_each(?))"

    def list_param(self, values: Iterable[Any]) -> Any:
        """A list of values as one query parameter (ids lists of any length share one plan)."""
        return orjson.dumps(list(values)).decode()

    def concat(self, expression: str, separator: str = " ") -> str:
        """The text values of ``expression`` in a group, joined by ``separator``."""
        return f"group_concat({expression}, '{separator}')"

    def caseless(self, expression: str) -> str:
        """``expression`` to order by without regard to case."""
        return f"{expression} COLLATE NOCASE"

    def vector_out(self, column: str) -> str:
        """A stored vector as the query reads it back (see :meth:`vector_bytes`)."""
        return column

    def vector_bytes(self, value: Any) -> bytes:
        """A vector read back, as the store hands vectors on: little-endian float16 bytes."""
        return bytes(value)

    def vector_in(self, data: bytes) -> Any:
        """Float16 bytes as the query parameter that stores them (see :meth:`vector_mark`)."""
        return data

    def vector_mark(self) -> str:
        """The placeholder of a vector parameter."""
        return "?"

    def json_text(self, column: str, key: str) -> str:
        """The field ``key`` of a JSON object kept as text in ``column``, as text."""
        return f"json_extract({column}, '$.{key}')"

    def json_number(self, column: str, key: str) -> str:
        """The field ``key`` of a JSON object in ``column``, as a number (0 when missing)."""
        return f"COALESCE(json_extract({column}, '$.{key}'), 0)"


class _Postgres(Dialect):
    name = "postgresql"
    join_in_order = "JOIN"
    lock_rows = " FOR NO KEY UPDATE"

    def in_list(self, column: str) -> str:
        return f"{column} = ANY(?)"

    def list_param(self, values: Iterable[Any]) -> Any:
        return list(values)

    def concat(self, expression: str, separator: str = " ") -> str:
        return f"string_agg(({expression})::text, '{separator}')"

    def caseless(self, expression: str) -> str:
        return f"lower({expression})"

    def vector_out(self, column: str) -> str:
        # pgvector's binary form: the dimension and a spare field (two bytes each), then
        # each value as a big-endian float16. Printed as text ("[x,y,...]") and parsed,
        # a reader's 1,000 interest vectors cost 86 ms of CPU at 1M papers; read as
        # bytes, the byte order is all there is to change.
        return f"halfvec_send({column})"

    def vector_bytes(self, value: Any) -> bytes:
        if isinstance(value, str):  # the text form (a column read as it is: ``db copy``)
            numbers = [float(x) for x in value.strip("[]").split(",") if x]
            return struct.pack(f"<{len(numbers)}e", *numbers)
        half = array("H", bytes(value)[4:])  # :meth:`vector_out`'s binary form
        half.byteswap()  # big-endian values to little-endian, on any machine
        return half.tobytes()

    def vector_in(self, data: bytes) -> Any:
        values = struct.unpack(f"<{len(data) // 2}e", data)
        return "[" + ",".join(repr(x) for x in values) + "]"

    def vector_mark(self) -> str:
        return "?::halfvec"

    def json_text(self, column: str, key: str) -> str:
        return f"(({column})::jsonb ->> '{key}')"

    def json_number(self, column: str, key: str) -> str:
        return (
            f"(CASE WHEN jsonb_typeof(({column})::jsonb -> '{key}') = 'number' "
            f"THEN (({column})::jsonb ->> '{key}')::double precision ELSE 0 END)"
        )


SQLITE = Dialect()
POSTGRES = _Postgres()
