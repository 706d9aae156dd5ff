#!/usr/bin/env python3
"""Draws docs/architecture/targets.svg from Package.swift (the package's own targets and the
dependencies among them) and docs/architecture/job-path.svg from job-path.dot, with Graphviz's
`dot` (Debian: graphviz).

    scripts/architecture-graph.py          (make graphs)
"""
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
from package_swift import CHECKS, TARGETS, WORKERS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "architecture"
shown = {n: v for n, v in TARGETS.items() if v[0] != "testTarget"}
# The clusters: the worker modules, the worker kinds' check modules (what the door links of them).
clusters = [
    ("workers", "worker modules: each on HeraldRuntime, HeraldWire and its worker kind's check", "#ffe3d6",
     [n for n in shown if n in WORKERS]),
    ("checks", "check modules: each on HeraldRuntime and HeraldWire", "#f3e6ff",
     [n for n in shown if n in CHECKS]),
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
