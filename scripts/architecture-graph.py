#!/usr/bin/env python3
"""Draws docs/architecture/targets.svg from Package.swift (the package's own targets and the
dependencies among them) and docs/architecture/job-path.svg from job-path.dot, with Graphviz's
`dot` (Debian: graphviz).

    scripts/architecture-graph.py          (make graphs)
"""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "architecture"
package = (ROOT / "Package.swift").read_text()

# Named dependency lists (`let checks: [Target.Dependency] = [...]`), as Package.swift uses them.
lists = {}
for name, body, more in re.findall(r"let (\w+): \[Target\.Dependency\] = \[(.*?)\]((?:[ \t]*\+[ \t]*\w+)*)\n", package, re.S):
    lists[name] = re.findall(r'"([\w-]+)"', re.sub(r'\.product\([^)]*\)', "", body))
    for listed in re.findall(r"\w+", more):
        lists[name] += lists.get(listed, [])
targets = {}
for match in re.finditer(r'\.(target|executableTarget|testTarget|systemLibrary|plugin)\(\s*name:\s*"([\w-]+)"(.*?)(?=\n        \.\w+\(|\n    \]\n\))', package, re.S):
    kind, name, rest = match.groups()
    deps = []
    dep_match = re.search(r"dependencies:\s*(\[.*?\])((?:\s*\+\s*\w+)*)", rest, re.S)
    if dep_match:
        deps = [d for d in re.findall(r'"([\w-]+)"', re.sub(r'\.product\([^)]*\)', "", dep_match.group(1)))]
        for listed in re.findall(r"\w+", dep_match.group(2)):
            deps += lists.get(listed, [])
    plugin_match = re.search(r"plugins:\s*\[(.*?)\]", rest, re.S)
    plugins = re.findall(r'"([\w-]+)"', plugin_match.group(1)) if plugin_match else []
    targets[name] = (kind, deps, plugins)

shown = {n: v for n, v in targets.items() if v[0] != "testTarget"}
# The clusters: the worker modules, the channels' check modules (what the door links of them).
clusters = [
    ("workers", "worker modules: each on HeraldRuntime, HeraldWire and its worker kind's check", "#ffe3d6",
     [n for n in shown if re.fullmatch(r"Herald(Phone|Email|Push|Cleanup|Apple)", n)]),
    ("checks", "check modules: each on HeraldRuntime and HeraldWire", "#f3e6ff",
     [n for n in shown if re.fullmatch(r"Herald\w+Check", n)]),
]
clustered = {n for _, _, _, members in clusters for n in members}
style = {
    "HeraldRuntime": 'shape=box, style="filled,bold", fillcolor="#dbe9ff"',
    "AMQP": 'shape=box, style=filled, fillcolor="#eeeeee"',
    "CRabbitMQ": 'shape=box, style=filled, fillcolor="#eeeeee"',
    "HeraldClient": 'shape=box, style=filled, fillcolor="#e6f5e6"',
    "HeraldWire": 'shape=box, style="filled,bold", fillcolor="#e6f5e6"',
    "HeraldStubs": 'shape=box, style="filled,dashed", fillcolor="#fff4d6"',
}
lines = ["digraph targets {", '  rankdir=BT; node [fontname="Helvetica", fontsize=11]; edge [color="#555555"];']
for cluster, label, color, members in clusters:
    lines.append(f'  subgraph cluster_{cluster} {{ label="{label}"; fontname="Helvetica"; style=rounded; color="#88aaaa";')
    for member in members:
        lines.append(f'    "{member}" [shape=box, style=filled, fillcolor="{color}"];')
    lines.append("  }")
for name, (kind, deps, plugins) in shown.items():
    if name in clustered:
        continue
    attrs = style.get(name, 'shape=ellipse' if kind == "executableTarget" else 'shape=component, style=dashed' if kind == "plugin" else "shape=box")
    lines.append(f'  "{name}" [{attrs}];')
# Transitive reduction: an edge another path already implies is left out of the picture.
edges = {name: {d for d in deps if d in shown} for name, (kind, deps, plugins) in shown.items()}
def reachable(start, skip):
    seen, stack = set(), [d for d in edges[start] if d != skip]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return seen
for name in shown:
    for dep in sorted(edges[name]):
        if dep not in reachable(name, dep):
            lines.append(f'  "{name}" -> "{dep}";')
# Build plugins: a dashed edge from each target that a plugin builds (at build time, not a link).
for name, (kind, deps, plugins) in shown.items():
    for plugin in plugins:
        lines.append(f'  "{name}" -> "{plugin}" [style=dashed, color="#999999"];')
lines.append("}")
(OUT / "targets.dot").write_text("\n".join(lines) + "\n")
for graph in ("targets", "job-path"):
    subprocess.run(["dot", "-Tsvg", str(OUT / f"{graph}.dot"), "-o", str(OUT / f"{graph}.svg")], check=True)
    print(f"wrote docs/architecture/{graph}.svg")
