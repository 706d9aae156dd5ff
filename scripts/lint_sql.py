#!/usr/bin/env python3
"""The judging half of scripts/lint-sql.sh (docs/testing.md, "The SQL linters"). Stdlib only.

  lint_sql.py ledger CHECK.json          the database's ledger holds the checksums of the SQL
                                          files in Sources/ (else heraldctl is older than them)
  lint_sql.py plpgsql CHECK.json         plpgsql_check's findings, each error a failure, each
                                          warning accepted in its function's file or a failure
  lint_sql.py squawk SQUAWK CONFIG       squawk over every Sources/*/SQL/migrations/*.sql: no
                                          finding but those its ignore comments name, each with a why

CHECK.json is what lint-sql.sh's query returns: {ledger, functions, findings, sql_functions}.
Each command prints its problems on stderr (file:line where there is one) and one line
`RESULT <key>=<value>...` on stdout for lint-sql.sh's summary, and exits 1 when anything failed.

Every function of schema herald is defined in a Sources/*/SQL/functions/ file, but a helper only
migrations call, created by its migration after a `-- herald:migration-helper` line.

Accepting a plpgsql_check warning: a comment line in the function's file (Sources/*/SQL/functions/)

    -- plpgsql_check: accept <text> — <why it is fine>

accepts every warning of that function whose message or detail contains <text>. The why is
required, and an accept that matches no warning fails (it is stale).

Ignoring a squawk finding: squawk's own comments, `-- squawk-ignore-file RULE[, RULE]` (the whole
file) or `-- squawk-ignore RULE[, RULE]` (the line right above the statement), each rule with a
`-- why: RULE[, RULE]: <reason>` line in the same block of comment lines. A bare ignore (no rule)
is refused, and an ignore that hides no finding fails (it is stale).
"""
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ROOT / "Sources"
problems: list[str] = []


def rel(path: pathlib.Path) -> str:
    return str(path.relative_to(ROOT))


def sql_files(kind: str) -> list[pathlib.Path]:
    return sorted(SOURCES.glob(f"*/SQL/{kind}/*.sql"))


def group_of(path: pathlib.Path) -> str:
    """The ledger's group of a module's file: HeraldPhone -> sms (the group kept its name), HeraldAPIStore -> api (SchemaGroup.name)."""
    module = path.relative_to(SOURCES).parts[0]
    return {"HeraldAPIStore": "api", "HeraldPhone": "sms"}.get(module, module.removeprefix("Herald").lower())


def result(**counts) -> None:
    print("RESULT " + " ".join(f"{k}={v}" for k, v in counts.items()))


# ---------------------------------------------------------------- ledger

def ledger(check: dict) -> None:
    recorded = {(row["group"], row["path"]): row["checksum"] for row in check["ledger"] or []}
    on_disk = {}
    for path in sql_files("migrations") + sql_files("functions"):
        key = (group_of(path), str(path.relative_to(path.parents[2] / "SQL")))
        on_disk[key] = (path, hashlib.sha256(path.read_bytes()).hexdigest())
    stale = [rel(path) for key, (path, checksum) in sorted(on_disk.items()) if recorded.get(key) != checksum]
    stale += [f"{group}/{path} (in the binary, not in Sources/)" for (group, path) in sorted(recorded) if (group, path) not in on_disk]
    if stale:
        problems.append("heraldctl embeds other SQL than Sources/ holds, so the database would not be what the files say: "
                        "build it again (swift build --product heraldctl) and run this again. Differs: " + ", ".join(stale))
    result(files=len(on_disk))


# ---------------------------------------------------------------- plpgsql_check

ACCEPT = re.compile(r"^\s*--\s*plpgsql_check:\s*accept\s+(?P<text>.+?)\s+—\s*(?P<why>.*?)\s*$")
DEFINES = re.compile(r"CREATE OR REPLACE FUNCTION herald\.([a-z_0-9]+)\(")
BODY = re.compile(r"\bAS\s+\$([A-Za-z_]*)\$")
HELPER = re.compile(r"^CREATE FUNCTION herald\.([a-z_0-9]+)\(")


def accepts_of(path: pathlib.Path, lines: list[str]) -> list:
    """The file's `-- plpgsql_check: accept` lines: [(line, text, why)]."""
    accepts = []
    for number, line in enumerate(lines, 1):
        if re.match(r"^\s*--\s*plpgsql_check:", line):
            match = ACCEPT.match(line)
            if not match or not match.group("why"):
                problems.append(f"{rel(path)}:{number}: not the form `-- plpgsql_check: accept <text> — <why>` (a why is required)")
            else:
                accepts.append((number, match.group("text"), match.group("why")))
    return accepts


def function_files() -> dict:
    """function name -> (file, the file's line of the body's line 1, [(line, text, why)] accepts)."""
    found = {}
    for path in sql_files("functions"):
        lines = path.read_text().splitlines()
        accepts = accepts_of(path, lines)
        current = None
        for number, line in enumerate(lines, 1):
            if (match := DEFINES.search(line)):
                current = match.group(1)
                found[current] = [path, None, accepts]
            if current and found[current][1] is None and BODY.search(line):
                found[current][1] = number
    # A helper only migrations call is created by the migration that introduces it, after a
    # `-- herald:migration-helper` line, and never replaced: a definition file could change under
    # the migrations that ran it, and a fresh install would not do what an upgrade did.
    for path in sql_files("migrations"):
        lines = path.read_text().splitlines()
        current = None
        for number, line in enumerate(lines, 1):
            if re.match(r"^\s*--\s*herald:migration-helper\s*$", line):
                current = ""
            elif current == "" and (match := HELPER.search(line)):
                current = match.group(1)
                found.setdefault(current, [path, None, accepts_of(path, lines)])
            if current and found[current][0] == path and found[current][1] is None and BODY.search(line):
                found[current][1] = number
                current = None
    return {name: tuple(value) for name, value in found.items()}


def plpgsql(check: dict) -> None:
    files = function_files()
    functions = check["functions"] or []
    used = set()
    errors = accepted = 0
    for function in functions:
        if function["language"] == "plpgsql" and function["trigger"] and not function["triggers"]:
            problems.append(f"herald.{function['name']}: a trigger function no trigger uses: plpgsql_check needs its table")
            errors += 1
        if function["name"] not in files:
            problems.append(f"herald.{function['name']}: no Sources/*/SQL/functions/*.sql defines it")
    seen = set()
    for finding in check["findings"] or []:
        key = (finding["function"], finding["lineno"], finding["level"], finding["message"], finding["detail"])
        if key in seen:  # a trigger function checked once per trigger
            continue
        seen.add(key)
        name = finding["function"]
        path, body_line, accepts = files.get(name, (None, None, []))
        where = f"{rel(path)}:{body_line + finding['lineno'] - 1}" if path and body_line and finding["lineno"] else (rel(path) if path else "?")
        text = finding["message"] + (f" ({finding['detail']})" if finding["detail"] else "")
        said = f"{where}: herald.{name} line {finding['lineno']}: {finding['level']}: {text}"
        if finding["level"] == "error":
            errors += 1
            problems.append(said + (f" [hint: {finding['hint']}]" if finding["hint"] else ""))
            continue
        matching = [a for a in accepts if a[1] in finding["message"] or a[1] in (finding["detail"] or "")]
        if matching:
            accepted += 1
            used.update((path, a[0]) for a in matching)
        else:
            problems.append(said + " — fix it, or accept it in the file: -- plpgsql_check: accept <text> — <why>")
    for name, (path, _, accepts) in files.items():
        for number, text, _ in accepts:
            if (path, number) not in used:
                problems.append(f"{rel(path)}:{number}: accepts `{text}`, which no warning of herald.{name} says (stale: remove it)")
    plpgsql_count = sum(1 for f in functions if f["language"] == "plpgsql")
    sql_failed = [f for f in check["sql_functions"] or [] if f["error"]]
    for function in sql_failed:
        problems.append(f"{function['signature']}: LANGUAGE sql body does not validate: {function['error']}")
    result(plpgsql=plpgsql_count, sql=len(check["sql_functions"] or []), other=len(functions) - plpgsql_count - len(check["sql_functions"] or []),
           errors=errors + len(sql_failed), unaccepted=len(seen) - errors - accepted, accepted=accepted)


# ---------------------------------------------------------------- squawk

IGNORE = re.compile(r"^\s*--\s*squawk-ignore(?P<file>-file)?\b(?P<rules>.*)$")
WHY = re.compile(r"^\s*--\s*why:\s*(?P<rules>[a-z0-9, -]+?):\s+\S")


def ignores_of(path: pathlib.Path) -> list[dict]:
    lines = path.read_text().splitlines()
    found = []
    for index, line in enumerate(lines):
        match = IGNORE.match(line)
        if not match:
            continue
        rules = [r.strip() for r in match.group("rules").split(",") if r.strip()]
        number = index + 1
        if not rules:
            problems.append(f"{rel(path)}:{number}: a squawk ignore must name its rules")
            continue
        # The block of comment lines around it: its why lines.
        start, end = index, index
        while start > 0 and lines[start - 1].lstrip().startswith("--"):
            start -= 1
        while end + 1 < len(lines) and lines[end + 1].lstrip().startswith("--"):
            end += 1
        explained = set()
        for other in lines[start:end + 1]:
            if (why := WHY.match(other)):
                explained.update(r.strip() for r in why.group("rules").split(","))
        for rule in rules:
            if rule not in explained:
                problems.append(f"{rel(path)}:{number}: ignores {rule} with no `-- why: {rule}: <reason>` line beside it")
        # A line ignore covers the statement below it: up to the line that ends it.
        last = index + 1
        while last < len(lines) and not re.sub(r"--.*$", "", lines[last]).rstrip().endswith(";"):
            last += 1
        found.append({"path": path, "line": number, "file": bool(match.group("file")), "rules": rules,
                      "first": index + 2, "last": last + 1})
    return found


def outside_transaction(path: pathlib.Path) -> bool:
    """A migration whose header says `-- herald:no-transaction` (the migrator runs it statement by statement)."""
    for line in path.read_text().split("\n"):
        if not (line.startswith("--") or not line.strip()):
            return False
        if line.strip() == "-- herald:no-transaction":
            return True
    return False


def run_squawk(squawk: str, config: str, paths: list[pathlib.Path], cwd: pathlib.Path) -> list[dict]:
    """squawk over `paths`: the files the migrator wraps in a transaction as the configuration says,
    the `herald:no-transaction` ones with --no-assume-in-transaction."""
    found = []
    for flags, group in (([], [p for p in paths if not outside_transaction(p)]),
                         (["--no-assume-in-transaction"], [p for p in paths if outside_transaction(p)])):
        if not group:
            continue
        process = subprocess.run([squawk, "--config", config, *flags, "--reporter", "json", *[str(p.relative_to(cwd)) for p in group]],
                                 cwd=cwd, capture_output=True, text=True)
        try:
            found += json.loads(process.stdout or "[]")
        except json.JSONDecodeError:
            problems.append(f"squawk failed (exit {process.returncode}): {process.stderr.strip() or process.stdout.strip()}")
    return found


def squawk(squawk: str, config: str) -> None:
    paths = sql_files("migrations")
    squawk, config = str(pathlib.Path(squawk).absolute()), str(pathlib.Path(config).resolve())
    ignores = [i for path in paths for i in ignores_of(path)]
    for finding in run_squawk(squawk, config, paths, ROOT):
        problems.append(f"{finding['file']}:{finding['line'] + 1}: {finding['rule_name']}: {finding['message']}"
                        " — fix it (a new migration), or ignore it in the file with a why (docs/testing.md)")
    # The same files without their ignores: every ignore must hide something.
    hidden = 0
    with tempfile.TemporaryDirectory() as tmp:
        bare = []
        for path in paths:
            copy = pathlib.Path(tmp) / path.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text("\n".join("--" if IGNORE.match(line) else line for line in path.read_text().split("\n")))
            bare.append(copy)
        shutil.copy(config, pathlib.Path(tmp) / ".squawk.toml")
        findings = run_squawk(squawk, str(pathlib.Path(tmp) / ".squawk.toml"), bare, pathlib.Path(tmp))
    for ignore in ignores:
        for rule in ignore["rules"]:
            covered = [f for f in findings if f["file"] == rel(ignore["path"]) and f["rule_name"] == rule
                       and (ignore["file"] or ignore["first"] <= f["line"] + 1 <= ignore["last"])]
            if not covered:
                problems.append(f"{rel(ignore['path'])}:{ignore['line']}: ignores {rule}, which squawk does not find there (stale: remove it)")
            hidden += len(covered)
    version = subprocess.run([squawk, "--version"], capture_output=True, text=True).stdout.split()[-1]
    result(version=version, files=len(paths), ignores=sum(len(i["rules"]) for i in ignores), hidden=hidden)


def main() -> int:
    command, *args = sys.argv[1:]
    if command in ("ledger", "plpgsql"):
        check = json.loads(pathlib.Path(args[0]).read_text())
        (ledger if command == "ledger" else plpgsql)(check)
    elif command == "squawk":
        squawk(*args)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for problem in problems:
        print(f"lint-sql: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
