"""The embedded engine's one SQLite database: connections per thread, WAL, schema registry."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_SCHEMAS: dict[str, str] = {}
_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {}
_MIGRATIONS: dict[str, Callable[[Database], None]] = {}
_lock = threading.RLock()


def register_schema(name: str, ddl: str, columns: dict[str, tuple[str, ...]] | None = None,
                    migrate: Callable[[Database], None] | None = None) -> None:
    """Add a module's tables (idempotent DDL: CREATE ... IF NOT EXISTS) to every database opened after.

    `columns` (table -> column definitions) are added to tables of older databases that lack them, so a data
    directory made by an earlier version keeps working (CREATE TABLE IF NOT EXISTS never adds a column).
    `migrate` brings what earlier versions stored there onto the current model (idempotent: it runs at every open).
    """
    _SCHEMAS[name] = ddl
    _COLUMNS[name] = columns or {}
    if migrate is not None:
        _MIGRATIONS[name] = migrate


def _add_missing_columns(conn: sqlite3.Connection, columns: dict[str, tuple[str, ...]]) -> None:
    for table, definitions in columns.items():
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        for definition in definitions:
            if definition.split()[0] not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {definition}")


class Database:
    """A SQLite file shared by the embedded adapters; one connection per thread, WAL mode."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._applied: set[str] = set()
        self.connection()  # create the file and schema eagerly: failures surface at start

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        self._ensure_schema(conn)
        return conn

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        pending = [name for name in _SCHEMAS if name not in self._applied]
        if not pending:
            return
        with _lock:
            for name in pending:
                if name in self._applied:
                    continue
                conn.executescript(_SCHEMAS[name])
                _add_missing_columns(conn, _COLUMNS.get(name, {}))
                self._applied.add(name)  # before the migration, which uses this database itself
                if name in _MIGRATIONS:
                    _MIGRATIONS[name](self)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception: all or nothing."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


_databases: dict[Path, Database] = {}


def open_database(path: Path) -> Database:
    """The process-wide Database for a file (cached: opened once per process)."""
    key = Path(path).resolve()
    with _lock:
        db = _databases.get(key)
        if db is None:
            db = _databases[key] = Database(key)
    return db
