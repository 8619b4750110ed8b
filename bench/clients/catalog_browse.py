"""bench/catalog-browsing's SQLAlchemy client: times reflection of schema `wide` through one
engine and prints one line per call: `<name> <milliseconds> <items>`, the fastest of three.

Usage: /usr/bin/python3 catalog_browse.py URL TABLE
"""
import sys
import time

from sqlalchemy import MetaData, Table, create_engine, inspect

url, table = sys.argv[1], sys.argv[2]
engine = create_engine(url)


def timed(name, call):
    best, items = float("inf"), 0
    for _ in range(3):
        started = time.perf_counter()
        with engine.connect() as conn:
            items = call(conn)
        best = min(best, (time.perf_counter() - started) * 1000)
    print(f"{name} {best} {items}", flush=True)


timed("get_table_names", lambda c: len(inspect(c).get_table_names(schema="wide")))
timed("get_columns", lambda c: len(inspect(c).get_columns(table, schema="wide")))
timed(
    "reflect table",
    lambda c: len(Table(table, MetaData(), autoload_with=c, schema="wide").columns),
)
