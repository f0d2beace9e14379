"""The store's schema as numbered migrations.

``PRAGMA user_version`` holds the number of the last migration applied. Opening a
store applies the missing ones in order, each in its own transaction; a store
whose version is newer than this code knows is refused (never downgraded).
Add a migration by appending to :data:`MIGRATIONS`; never edit a released one.
"""

from __future__ import annotations

# The columns of the spaces table, written once: migration 1 creates it, migration 5 rebuilds it
# with one more metric (the text each produces is the one released).
_SPACES_COLUMNS = """\
        id          INTEGER PRIMARY KEY,
        uid         TEXT    NOT NULL UNIQUE,
        name        TEXT    NOT NULL UNIQUE,
        dim         INTEGER NOT NULL CHECK (dim > 0),
        metric      TEXT    NOT NULL CHECK (metric IN ({metrics})),
        dtype       TEXT    NOT NULL CHECK (dtype IN ('float32', 'float16')),
        provenance  TEXT    NOT NULL DEFAULT '{{}}' CHECK (json_valid(provenance)),
        generation  INTEGER NOT NULL DEFAULT 0,
        next_row    INTEGER NOT NULL DEFAULT 0,
        dead_rows   INTEGER NOT NULL DEFAULT 0,
        created_at  TEXT    NOT NULL,
        updated_at  TEXT    NOT NULL
    );
"""

# Migration 7's spaces table: migration 6's columns (layout added last by ALTER TABLE) with a third layout.
_SPACES_COLUMNS_7 = _SPACES_COLUMNS.format(metrics="'cosine', 'ip', 'l2', 'poincare'").replace(
    "        updated_at  TEXT    NOT NULL\n",
    "        updated_at  TEXT    NOT NULL,\n"
    "        layout      TEXT    NOT NULL DEFAULT 'dense' CHECK (layout IN ('dense', 'sparse', 'multivector'))\n")

#: Migration ``i`` (1-based) brings a store from version ``i - 1`` to ``i``.
MIGRATIONS: list[str] = [
    # 1: spaces, items and vector blocks.
    """
    CREATE TABLE spaces (
""" + _SPACES_COLUMNS.format(metrics="'cosine', 'ip', 'l2'") + """    -- One row per live item. `row` is the item's position in the space's
    -- append-only vector array; a replaced or deleted item leaves a dead row.
    CREATE TABLE items (
        space_id  INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
        row       INTEGER NOT NULL,
        item_id   TEXT    NOT NULL,
        text      TEXT,
        meta      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
        hash      TEXT,
        PRIMARY KEY (space_id, row)
    ) WITHOUT ROWID;
    CREATE UNIQUE INDEX items_by_id ON items (space_id, item_id);
    CREATE INDEX items_by_hash ON items (space_id, hash) WHERE hash IS NOT NULL;
    -- Vectors in blocks of consecutive rows (a few MiB each), so that loading a
    -- space is a handful of large reads rather than one row per vector.
    CREATE TABLE blocks (
        space_id   INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
        first_row  INTEGER NOT NULL,
        n_rows     INTEGER NOT NULL CHECK (n_rows > 0),
        data       BLOB    NOT NULL
    );
    CREATE UNIQUE INDEX blocks_by_row ON blocks (space_id, first_row);
    """,
    # 2: recorded evaluation results. A result about a stored space is linked to
    # it and to the generation it measured (so a later change makes it visibly
    # stale); one about an encoder alone has no space.
    """
    CREATE TABLE results (
        id          INTEGER PRIMARY KEY,
        space_id    INTEGER REFERENCES spaces(id) ON DELETE CASCADE,
        generation  INTEGER,
        subject     TEXT    NOT NULL,
        task_name   TEXT    NOT NULL,
        split       TEXT    NOT NULL,
        main_metric TEXT    NOT NULL,
        main_score  REAL    NOT NULL,
        result      TEXT    NOT NULL CHECK (json_valid(result)),
        created_at  TEXT    NOT NULL,
        CHECK ((space_id IS NULL) = (generation IS NULL))
    );
    CREATE INDEX results_by_space ON results (space_id, task_name);
    """,
    # 3: named binary state of a space that its vectors depend on, such as the
    # fitted transforms of a derived space (applied to every query it embeds).
    """
    CREATE TABLE space_state (
        space_id  INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
        name      TEXT    NOT NULL,
        data      BLOB    NOT NULL,
        PRIMARY KEY (space_id, name)
    ) WITHOUT ROWID;
    """,
    # 4: the ledger of ingested shards (Parquet files written by a distributed embed job),
    # keyed by their SHA-256 and written in the same transaction as the shard's items, so a
    # re-run or a resumed job never ingests a shard twice.
    """
    CREATE TABLE shards (
        space_id    INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
        sha256      TEXT    NOT NULL,
        job         TEXT    NOT NULL,
        name        TEXT    NOT NULL,
        n_rows      INTEGER NOT NULL CHECK (n_rows >= 0),
        ingested_at TEXT    NOT NULL,
        PRIMARY KEY (space_id, sha256)
    ) WITHOUT ROWID;
    """,
    # 5: the poincare metric (spaces learned by `repspace learn poincare`). SQLite cannot alter a CHECK
    # constraint, so the table is rebuilt (SQLite's documented 12-step procedure: run with foreign keys
    # off, see FOREIGN_KEYS_OFF, so that dropping the old table does not cascade to the items).
    """
    CREATE TABLE spaces_new (
""" + _SPACES_COLUMNS.format(metrics="'cosine', 'ip', 'l2', 'poincare'") + """    INSERT INTO spaces_new (id, uid, name, dim, metric, dtype, provenance, generation, next_row, dead_rows,
                            created_at, updated_at)
        SELECT id, uid, name, dim, metric, dtype, provenance, generation, next_row, dead_rows, created_at, updated_at
        FROM spaces;
    DROP TABLE spaces;
    ALTER TABLE spaces_new RENAME TO spaces;
    """,
    # 6: sparse spaces. A space's layout says whether its rows are dense vectors (``blocks``) or sparse
    # ones over a vocabulary of ``dim`` features (``sparse_blocks``: runs of consecutive rows in CSR form,
    # int64 row offsets then int32 feature ids then float32 weights, see _sparse_blocks.py).
    """
    ALTER TABLE spaces ADD COLUMN layout TEXT NOT NULL DEFAULT 'dense' CHECK (layout IN ('dense', 'sparse'));
    CREATE TABLE sparse_blocks (
        space_id   INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
        first_row  INTEGER NOT NULL,
        n_rows     INTEGER NOT NULL CHECK (n_rows > 0),
        nnz        INTEGER NOT NULL CHECK (nnz >= 0),
        data       BLOB    NOT NULL
    );
    CREATE UNIQUE INDEX sparse_blocks_by_row ON sparse_blocks (space_id, first_row);
    """,
    # 7: multi-vector spaces (layout 'multivector': a set of ``dim``-d token vectors per item, searched by late
    # interaction). The layout's CHECK grows, so the spaces table is rebuilt as in migration 5 (foreign keys
    # off); ``token_blocks`` holds runs of consecutive rows: int64 token offsets, then the float32 tokens
    # (see _token_blocks.py).
    """
    CREATE TABLE spaces_new (
""" + _SPACES_COLUMNS_7 + """    INSERT INTO spaces_new (id, uid, name, dim, metric, dtype, provenance, generation, next_row, dead_rows,
                            created_at, updated_at, layout)
        SELECT id, uid, name, dim, metric, dtype, provenance, generation, next_row, dead_rows, created_at, updated_at,
               layout
        FROM spaces;
    DROP TABLE spaces;
    ALTER TABLE spaces_new RENAME TO spaces;
    CREATE TABLE token_blocks (
        space_id   INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
        first_row  INTEGER NOT NULL,
        n_rows     INTEGER NOT NULL CHECK (n_rows > 0),
        n_tokens   INTEGER NOT NULL CHECK (n_tokens >= n_rows),
        data       BLOB    NOT NULL
    );
    CREATE UNIQUE INDEX token_blocks_by_row ON token_blocks (space_id, first_row);
    """,
]


#: Migrations (by number) that rebuild a table others refer to: applied with foreign keys off, then
#: checked with ``PRAGMA foreign_key_check`` before they commit.
FOREIGN_KEYS_OFF: frozenset[int] = frozenset({5, 7})

SCHEMA_VERSION = len(MIGRATIONS)
