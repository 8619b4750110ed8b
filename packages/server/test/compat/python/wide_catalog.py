"""The wide-catalog test's SQLAlchemy program: reflection over a schema of thousands of tables,
one JSON line per step ({"step": ..., "ok": true, "value": ...} or {"step": ..., "ok": false,
"sqlState": ..., "error": ...}).

Usage: /usr/bin/python3 wide_catalog.py host port database user password table hidden_table
"""
import json
import sys
from urllib.parse import quote

from sqlalchemy import MetaData, Table, create_engine, inspect

host, port, database, user, password, table, hidden = sys.argv[1:8]
engine = create_engine(
    f"postgresql+psycopg2://{quote(user)}:{quote(password)}@{host}:{port}/{database}?sslmode=disable"
)


def step(name, call):
    try:
        with engine.connect() as conn:
            value = call(conn)
        print(json.dumps({"step": name, "ok": True, "value": value}), flush=True)
    except Exception as error:  # every failure is reported as the step's result
        code = getattr(getattr(error, "orig", None), "pgcode", None)
        print(json.dumps({"step": name, "ok": False, "sqlState": code, "error": str(error)}), flush=True)


step("tableNames", lambda c: len(inspect(c).get_table_names(schema="wide")))
step("columns", lambda c: [col["name"] for col in inspect(c).get_columns(table, schema="wide")])
step("reflect", lambda c: list(Table(table, MetaData(), autoload_with=c, schema="wide").columns.keys()))
step("hasHidden", lambda c: inspect(c).has_table(hidden, schema="wide"))
