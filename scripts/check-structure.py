#!/usr/bin/env python3
"""The architecture, checked (docs/architecture.md, "Modules"): in Package.swift and in the sources'
import lines,
- HeraldWire (the job types and values every side shares) depends on HeraldRuntime only;
- a worker kind's check module (what herald-api and a front API run of it: HeraldPhoneCheck, …) on
  HeraldRuntime and HeraldWire only;
- a worker module (HeraldPhone, …) on those and its own check module, never on another worker's
  module or another kind's check;
- the door (HeraldAPI, herald-api, HeraldClient) on no worker module;
- the runtime names no other module of Herald's.
And SQL is SQL: no table, index, function, trigger or view is defined in a Swift source under
Sources/ (they live in each module's SQL/ folder), and no statement is written in a Swift source
of a product module (it lives in SQL/queries/, HeraldStatement): the files that still hold some
are listed in scripts/statements-in-swift.txt with their count, which may only fall (the bench,
chaos, stub and dev tools keep theirs). Exits 1 naming each breach.

    scripts/check-structure.py            (run by `make test`)
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
from package_swift import CHECKS, TARGETS, WIRE, WORKERS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
# What the door must not link: a worker module, or the aggregate of them all.
WORKER_MODULES = set(WORKERS) | {"HeraldWorkers"}
DOOR = ("HeraldAPI", "herald-api", "HeraldClient")
# Modules with no rule of their own here: the runtime (checked below), the aggregate of every
# worker, herald-api's store, the stand-ins of remote providers.
OTHERS = {"HeraldRuntime", "HeraldWorkers", "HeraldStubs"}
# herald-api's store (API keys, Verify Services), which herald-api and heraldctl link.
ALLOWED = {WIRE: {"HeraldRuntime"}, "HeraldAPIStore": {"HeraldRuntime"}}
ALLOWED.update({check: {"HeraldRuntime", WIRE} for check in CHECKS})
ALLOWED.update({worker: {"HeraldRuntime", WIRE} | ({check} if check else set()) for worker, check in WORKERS.items()})
problems = []

for folder in sorted((ROOT / "Sources").iterdir()):
    if folder.is_dir() and folder.name.startswith("Herald") and folder.name not in set(ALLOWED) | OTHERS | set(DOOR):
        problems.append(f"Sources/{folder.name}: a module scripts/check-structure.py gives no place (a worker, a check, the door or another)")



def package_dependencies(target):
    """Herald's own modules `target` depends on in Package.swift (named lists expanded), or None."""
    if target not in TARGETS:
        return None
    return {name for name in TARGETS[target][1] if name.startswith("Herald")}


def imports(module):
    """(file, line, module) of each `import Herald…` in a module's sources."""
    for source in sorted((ROOT / "Sources" / module).rglob("*.swift")):
        for number, line in enumerate(source.read_text().splitlines(), 1):
            # `import M`, `@testable import M`, `public import M`, `import struct M.T`, …
            imported = re.match(r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
                                r"(?:(?:struct|class|enum|protocol|typealias|func|var|let|actor)\s+)?(Herald\w+)\b", line)
            if imported:
                yield source.relative_to(ROOT), number, imported.group(1)


for module, allowed_modules in sorted(ALLOWED.items()):
    deps = package_dependencies(module)
    if deps is None:
        problems.append(f"Package.swift: no target {module} with dependencies")
        continue
    if "HeraldRuntime" not in deps:
        problems.append(f"Package.swift: {module} does not depend on HeraldRuntime")
    for other in sorted(deps - allowed_modules):
        problems.append(f"Package.swift: {module} depends on {other} (it may depend on {', '.join(sorted(allowed_modules))})")
    for source, number, other in imports(module):
        if other not in allowed_modules:
            problems.append(f"{source}:{number}: {module} imports {other}")

def closure(module):
    """Every Herald module `module` links, through any path of Package.swift's dependencies."""
    seen, stack = set(), [module]
    while stack:
        for dependency in package_dependencies(stack.pop()) or set():
            if dependency not in seen:
                seen.add(dependency)
                stack.append(dependency)
    return seen


for module in DOOR:
    if package_dependencies(module) is None:
        problems.append(f"Package.swift: no target {module} with dependencies")
        continue
    for other in sorted(closure(module) & WORKER_MODULES):
        problems.append(f"Package.swift: {module} links the worker module {other} (the door links the wire and the checks)")
    for source, number, other in imports(module):
        if other in WORKER_MODULES:
            problems.append(f"{source}:{number}: {module} imports the worker module {other}")

# The runtime names no other module of Herald's.
for source, number, other in imports("HeraldRuntime"):
    problems.append(f"{source}:{number}: HeraldRuntime imports {other}")

# SQL definitions live in .sql files (Sources/*/SQL), never in Swift literals.
DEFINITION = re.compile(r"\b(CREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|TABLE|TRIGGER|VIEW|PROCEDURE)|CREATE\s+(UNIQUE\s+)?INDEX|ALTER\s+TABLE)\b", re.I)
sql_files = sorted((ROOT / "Sources").rglob("SQL/**/*.sql"))
for source in sorted((ROOT / "Sources").rglob("*.swift")):
    for number, line in enumerate(source.read_text().splitlines(), 1):
        if DEFINITION.search(line) and not line.lstrip().startswith("//"):
            problems.append(f"{source.relative_to(ROOT)}:{number}: SQL definition in Swift (put it in the module's SQL/ folder)")

# Statements live in SQL/queries/ files; the files not yet moved may keep what they have.
STATEMENT = re.compile(r"\b(SELECT\b|INSERT\s+INTO\b|UPDATE\s+herald\.|DELETE\s+FROM\b|WITH\s+\w+\s+AS\s+(MATERIALIZED\s+)?\()")
TOOLS = {"herald-bench", "herald-peer-swift", "herald-chaos", "HeraldStubs", "herald-dev-stubs", "herald-dev-apple", "embed-files"}
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
print(f"structure: {len(WORKERS)} worker modules, {len(CHECKS)} check modules and the wire in their places, the door on no worker; "
      f"{len(sql_files)} SQL files, no SQL definition in Swift; {sum(found.values())} statement keywords left in "
      f"{len(found)} Swift files of the product, none new")
