#!/usr/bin/env python3
"""Every statement file (Sources/*/SQL/queries/*.sql) read by PostgreSQL as its header declares it.

The EmbedFiles plugin generates each file's Swift type from its header (`-- name:`, `-- param
NAME: TYPE`, `-- column NAME: TYPE`, each may end `?` or `as SwiftType`; Sources/embed-files/Statement.swift). This check prepares
every file on a migrated database, without types, and fails naming the file when:
  - PostgreSQL cannot prepare it (a table, column or function that is not there, a parameter
    whose type it cannot infer: cast it, `$1::text`);
  - the parameter types it infers are not the declared ones, in number or in type;
  - the columns its result has (psql's \\gdesc of `EXECUTE`, which describes without running)
    are not the declared ones, in number or in type.
NULL-ness is the header's word (`?`): PostgreSQL does not tell it for a function's result.

    scripts/check-statements.py DATABASE_URL      (called by scripts/lint-sql.sh on herald_lint)
"""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def header(path):
    """(name, [param types], [column types]) from the file's leading comment lines."""
    name, params, columns = None, [], []
    for line in path.read_text().splitlines():
        if not line.startswith("--"):
            break
        body = line[2:].strip()
        if body.startswith("name:"):
            name = body[5:].strip()
        for kind, into in (("param ", params), ("column ", columns)):
            if body.startswith(kind):
                into.append(body[len(kind):].split(":", 1)[1].split(" as ")[0].strip().rstrip("?"))
    return name, params, columns


def describe(url, path, count):
    """PostgreSQL's parameter types and result column types of the file, or its error."""
    text = path.read_text().strip().rstrip(";")
    nulls = ", ".join(["NULL"] * count)
    execute = f"EXECUTE herald_statement({nulls})" if count else "EXECUTE herald_statement"
    script = (f"PREPARE herald_statement AS\n{text};\n"
              "SELECT 'param|' || t::text FROM pg_prepared_statements, unnest(parameter_types) WITH ORDINALITY AS u(t, i)"
              " WHERE name = 'herald_statement' ORDER BY i;\n"
              f"{execute} \\gdesc\n")
    result = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", url], input=script,
                            capture_output=True, text=True)
    if result.returncode != 0:
        return None, None, result.stderr.strip()
    params, columns = [], []
    for line in result.stdout.splitlines():
        if line.startswith("param|"):
            params.append(line[6:])
        elif "|" in line:
            columns.append(line.rsplit("|", 1)[1])
    return params, columns, None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    url = sys.argv[1]
    files = sorted(ROOT.glob("Sources/*/SQL/queries/*.sql"))
    problems = []
    for path in files:
        where = path.relative_to(ROOT)
        name, params, columns = header(path)
        if not name:
            problems.append(f"{where}: no `-- name:` line")
            continue
        got_params, got_columns, error = describe(url, path, len(params))
        if error:
            problems.append(f"{where}: PostgreSQL does not prepare it: {error}")
            continue
        if got_params != params:
            problems.append(f"{where}: parameters are {got_params} to PostgreSQL, declared {params}")
        if got_columns != columns:
            problems.append(f"{where}: columns are {got_columns} to PostgreSQL, declared {columns}")
    for problem in problems:
        print(f"check-statements: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"{len(files)} statement files prepared as their headers declare")


if __name__ == "__main__":
    main()
