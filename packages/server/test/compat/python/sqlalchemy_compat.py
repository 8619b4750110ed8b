"""The compat suite's psycopg2 + SQLAlchemy driver.

Runs every check through the given server and prints one JSON line per step:
{"step": ..., "ok": true, "value": ...} or {"step": ..., "ok": false, "sqlState": ..., "error": ...}.
A failed step does not stop the later ones.

Usage: /usr/bin/python3 sqlalchemy_compat.py host port database user password
"""

import json
import sys

import psycopg2
from sqlalchemy import create_engine, inspect


def emit(step, fn):
    try:
        value = fn()
        print(json.dumps({"step": step, "ok": True, "value": value}, default=str), flush=True)
    except Exception as e:  # report every failure as a step result
        orig = getattr(e, "orig", e)
        print(
            json.dumps(
                {
                    "step": step,
                    "ok": False,
                    "sqlState": getattr(orig, "pgcode", None),
                    "error": str(orig).strip(),
                }
            ),
            flush=True,
        )
        after_failure()


# Every DBAPI connection the engine opened. A connection whose first-connect probe failed is
# left open by SQLAlchemy inside the transaction the probe began; with a PGlite upstream (one
# backend session, whole transactions serialized across clients) that would block every later
# step, so a failed step closes them all and the engine's pool starts afresh.
raw_connections = []
engine = None


def after_failure():
    for conn in raw_connections:
        if not conn.closed:
            conn.close()
    raw_connections.clear()
    if engine is not None:
        engine.dispose()


def main():
    global engine
    host, port, database, user, password = sys.argv[1:6]

    def connect():
        conn = psycopg2.connect(
            host=host,
            port=int(port),
            dbname=database,
            user=user,
            password=password,
            sslmode="disable",
            application_name="palisade-compat-python",
        )
        raw_connections.append(conn)
        return conn

    engine = create_engine("postgresql+psycopg2://", creator=connect)

    def versions():
        with engine.connect() as conn:
            return {
                "server_version_info": list(conn.dialect.server_version_info),
                "default_schema_name": conn.dialect.default_schema_name,
            }

    emit("connect", versions)
    emit("tableNames", lambda: inspect(engine).get_table_names())
    emit("schemaNames", lambda: inspect(engine).get_schema_names())
    emit(
        "columns",
        lambda: [
            {"name": c["name"], "type": str(c["type"]), "nullable": c["nullable"]}
            for c in inspect(engine).get_columns("customers")
        ],
    )
    emit("pk", lambda: inspect(engine).get_pk_constraint("customers"))

    def query(sql, params=None):
        conn = connect()
        try:
            with conn.cursor() as cur:
                cur.execute(sql, params)
                # Integers stay numbers; text and numeric come back as strings.
                return [[v if v is None or isinstance(v, int) else str(v) for v in row] for row in cur.fetchall()]
        finally:
            conn.close()

    emit(
        "parameterised",
        lambda: query(
            "SELECT id, name, email FROM customers WHERE id >= %s AND name <> %s ORDER BY id", (1, "nobody")
        ),
    )
    emit("ordersTotal", lambda: query("SELECT count(*), sum(amount) FROM orders"))
    emit("deniedColumn", lambda: query("SELECT id, ssn FROM customers"))
    emit("hiddenTable", lambda: query("SELECT * FROM secrets"))


main()
