#!/usr/bin/env python3
"""Every statement file (Sources/*/SQL/queries/*.sql) read by PostgreSQL as its header declares it.

The EmbedFiles plugin generates each file's Swift type from its header (`-- name:`, `-- param
NAME: TYPE`, `-- column NAME: TYPE`, each may end `?` or `as SwiftType`; Sources/embed-files/Statement.swift). This check prepares
every file on a migrated database, without types, asks PostgreSQL to describe it (libpq's
PQdescribePrepared: what a driver is told before it binds, nothing runs), and fails naming the
file when:
  - PostgreSQL cannot prepare it (a table, column or function that is not there, a parameter
    whose type it cannot infer: cast it, `$1::text`);
  - the parameter types it infers are not the declared ones, in number or in type;
  - the result's columns are not the declared ones, in number or in type;
  - a column read straight from a table column that may be NULL is declared without `?`.
    PostgreSQL names the table column behind a plain column reference (PQftable, PQftablecol);
    for a function's result or an expression it names none, and NULL-ness is the header's word.
    A column declared `?` over a NOT NULL table column passes: an outer join makes it optional.

Needs psycopg (PyPI), in the venv scripts/lint-sql.sh makes.

    scripts/check-statements.py DATABASE_URL      (called by scripts/lint-sql.sh on herald_lint)
"""
import pathlib
import sys

import psycopg
from psycopg import pq

ROOT = pathlib.Path(__file__).resolve().parent.parent


# `-- params NAME: GROUP`: the types of a parameter group's members, in order (the generator's
# ParameterGroup, Sources/embed-files/Statement.swift).
GROUPS = {"DeliveryAttempts": ["text[]", "text[]", "integer[]", "text[]", "text[]", "integer[]"]}


def header(path):
    """(name, [param types], [(column name, type, optional)]) from the file's leading comment lines."""
    name, params, columns = None, [], []
    for line in path.read_text().splitlines():
        if not line.startswith("--"):
            break
        body = line[2:].strip()
        if body.startswith("name:"):
            name = body[5:].strip()
        elif body.startswith("param "):
            params.append(body[6:].split(":", 1)[1].split(" as ")[0].strip().rstrip("?"))
        elif body.startswith("params "):
            group = body[7:].split(":", 1)[-1].strip()
            if group not in GROUPS:
                raise SystemExit(f"check-statements: {path}: `{body}`: no parameter group {group} (one of {', '.join(GROUPS)})")
            params += GROUPS[group]
        elif body.startswith("column "):
            field, declared = body[7:].split(":", 1)
            declared = declared.split(" as ")[0].strip()
            columns.append((field.strip(), declared.rstrip("?"), declared.endswith("?")))
    return name, params, columns


class Database:
    def __init__(self, url):
        self.connection = psycopg.connect(url, autocommit=True)
        self.count = 0

    def fetch(self, sql, *args):
        with self.connection.cursor() as cursor:
            cursor.execute(sql, args)
            return cursor.fetchone()

    def type_name(self, oid, modifier=-1):
        return self.fetch("SELECT format_type(%s, nullif(%s, -1))", oid, modifier)[0]

    def describe(self, path):
        """([param types], [(column type, (table, column name, NOT NULL) or None)]), or an error."""
        self.count += 1
        name = f"herald_statement_{self.count}".encode()
        text = path.read_text().strip().rstrip(";")
        pgconn = self.connection.pgconn
        prepared = pgconn.prepare(name, text.encode())
        if prepared.status != pq.ExecStatus.COMMAND_OK:
            return None, None, prepared.error_message.decode().strip()
        described = pgconn.describe_prepared(name)
        params = [self.type_name(described.param_type(i)) for i in range(described.nparams)]
        columns = []
        for i in range(described.nfields):
            source = None
            if described.ftable(i):
                source = self.fetch("SELECT %s::regclass::text, attname, attnotnull FROM pg_attribute"
                                    " WHERE attrelid = %s AND attnum = %s",
                                    described.ftable(i), described.ftable(i), described.ftablecol(i))
            columns.append((self.type_name(described.ftype(i), described.fmod(i)), source))
        pgconn.exec_(b"DEALLOCATE " + name)
        return params, columns, None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    database = Database(sys.argv[1])
    files = sorted(ROOT.glob("Sources/*/SQL/queries/*.sql"))
    problems = []
    for path in files:
        where = path.relative_to(ROOT)
        name, params, columns = header(path)
        if not name:
            problems.append(f"{where}: no `-- name:` line")
            continue
        got_params, got_columns, error = database.describe(path)
        if error:
            problems.append(f"{where}: PostgreSQL does not prepare it: {error}")
            continue
        if got_params != params:
            problems.append(f"{where}: parameters are {got_params} to PostgreSQL, declared {params}")
        if [t for t, _ in got_columns] != [t for _, t, _ in columns]:
            problems.append(f"{where}: columns are {[t for t, _ in got_columns]} to PostgreSQL, declared {[t for _, t, _ in columns]}")
            continue
        for (field, _, optional), (_, source) in zip(columns, got_columns):
            if source and not source[2] and not optional:
                problems.append(f"{where}: column {field} is {source[0]}.{source[1]}, which may be NULL: declare it `?`")
    for problem in problems:
        print(f"check-statements: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"{len(files)} statement files prepared and described as their headers declare")


if __name__ == "__main__":
    main()
