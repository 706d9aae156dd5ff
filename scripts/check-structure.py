#!/usr/bin/env python3
"""The architecture, checked: a channel target depends on HeraldRuntime only, never on another
channel, in Package.swift and in its sources' import lines. Exits 1 naming each breach.

    scripts/check-structure.py            (run by `make test`)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHANNELS = sorted(p.name for p in (ROOT / "Sources").iterdir() if p.is_dir() and p.name.startswith("Herald")
                  and p.name not in ("HeraldRuntime", "HeraldClient", "HeraldStubs"))
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

if problems:
    print("structure check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"structure: {len(CHANNELS)} channels ({', '.join(CHANNELS)}), each on HeraldRuntime only")
