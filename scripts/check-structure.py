#!/usr/bin/env python3
"""The architecture, checked: a channel target depends on HeraldRuntime only, never on another
channel, in Package.swift and in its sources' import lines; and SQL is SQL: no table, index,
function, trigger or view is defined in a Swift source under Sources/ (they live in each
module's SQL/ folder, docs/architecture.md), and no statement is written in a Swift source of a
product module (it lives in SQL/queries/, HeraldStatement): the files that still hold some are
listed in scripts/statements-in-swift.txt with their count, which may only fall (the list is
edited down as they move; the bench, chaos, stub and dev tools keep theirs). Exits 1 naming each
breach.

    scripts/check-structure.py            (run by `make test`)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHANNELS = sorted(p.name for p in (ROOT / "Sources").iterdir() if p.is_dir() and p.name.startswith("Herald")
                  and p.name not in ("HeraldRuntime", "HeraldClient", "HeraldStubs", "HeraldAPI", "HeraldAPIStore"))
problems = []

# Package.swift: the dependencies of each channel target.
package = (ROOT / "Package.swift").read_text()
for channel in CHANNELS:
    match = re.search(r'\.target\(\s*name:\s*"%s",\s*dependencies:\s*(\[[^\]]*\])' % channel, package, re.S)
    if not match:
        problems.append(f"Package.swift: no target {channel} with dependencies")
        continue
    deps = set(re.findall(r'"(Herald\w+)"', match.group(1)))
    if "HeraldRuntime" not in deps:
        problems.append(f"Package.swift: {channel} does not depend on HeraldRuntime")
    for other in sorted(deps - {"HeraldRuntime"}):
        problems.append(f"Package.swift: {channel} depends on {other} (a channel depends on HeraldRuntime only)")

# Sources: no channel imports another channel, the client, or the test support.
for channel in CHANNELS:
    for source in sorted((ROOT / "Sources" / channel).rglob("*.swift")):
        for number, line in enumerate(source.read_text().splitlines(), 1):
            imported = re.match(r"^\s*(?:@testable\s+)?import\s+(Herald\w+)\s*$", line)
            if imported and imported.group(1) != "HeraldRuntime":
                problems.append(f"{source.relative_to(ROOT)}:{number}: {channel} imports {imported.group(1)}")

# The runtime names no channel.
for source in sorted((ROOT / "Sources" / "HeraldRuntime").rglob("*.swift")):
    for number, line in enumerate(source.read_text().splitlines(), 1):
        imported = re.match(r"^\s*import\s+(Herald\w+)\s*$", line)
        if imported:
            problems.append(f"{source.relative_to(ROOT)}:{number}: HeraldRuntime imports {imported.group(1)}")

# SQL definitions live in .sql files (Sources/*/SQL), never in Swift literals.
DEFINITION = re.compile(r"\b(CREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|TABLE|TRIGGER|VIEW|PROCEDURE)|CREATE\s+(UNIQUE\s+)?INDEX|ALTER\s+TABLE)\b", re.I)
sql_files = sorted((ROOT / "Sources").rglob("SQL/**/*.sql"))
for source in sorted((ROOT / "Sources").rglob("*.swift")):
    for number, line in enumerate(source.read_text().splitlines(), 1):
        if DEFINITION.search(line) and not line.lstrip().startswith("//"):
            problems.append(f"{source.relative_to(ROOT)}:{number}: SQL definition in Swift (put it in the module's SQL/ folder)")

# Statements live in SQL/queries/ files; the files not yet moved may keep what they have.
STATEMENT = re.compile(r"\b(SELECT\b|INSERT\s+INTO\b|UPDATE\s+herald\.|DELETE\s+FROM\b|WITH\s+\w+\s+AS\s+(MATERIALIZED\s+)?\()")
TOOLS = {"herald-bench", "herald-chaos", "HeraldStubs", "herald-dev-stubs", "herald-dev-apple", "embed-files"}
allowed_path = ROOT / "scripts" / "statements-in-swift.txt"
allowed = {}
for entry in allowed_path.read_text().splitlines():
    if entry.strip() and not entry.startswith("#"):
        path, count = entry.rsplit(" ", 1)
        allowed[path] = int(count)
found = {}
for source in sorted((ROOT / "Sources").rglob("*.swift")):
    module = source.relative_to(ROOT / "Sources").parts[0]
    if module in TOOLS:
        continue
    count = sum(1 for line in source.read_text().splitlines() if not line.lstrip().startswith("//") for _ in STATEMENT.finditer(line))
    if count:
        found[str(source.relative_to(ROOT))] = count
for path in sorted(set(found) | set(allowed)):
    have, may = found.get(path, 0), allowed.get(path, 0)
    if have > may:
        problems.append(f"{path}: {have} SQL statement keywords in Swift, {may} allowed (put the statement in the module's SQL/queries/)")
    elif have < may:
        problems.append(f"{path}: {have} SQL statement keywords in Swift, the list allows {may}: lower it in {allowed_path.relative_to(ROOT)}")

if problems:
    print("structure check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"structure: {len(CHANNELS)} channels ({', '.join(CHANNELS)}), each on HeraldRuntime only; "
      f"{len(sql_files)} SQL files, no SQL definition in Swift; {sum(found.values())} statement keywords left in "
      f"{len(found)} Swift files of the product, none new")
