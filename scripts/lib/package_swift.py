"""Package.swift as scripts/check-structure.py and scripts/architecture-graph.py read it: each
target's kind, dependencies (named lists such as `+ checks` expanded) and plugins, and the
modules' places in the architecture (docs/architecture.md, "Read this first: the targets")."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
PACKAGE = (ROOT / "Package.swift").read_text()

WIRE = "HeraldWire"
# Each worker module and its worker kind's check module (cleanup checks nothing for the door).
WORKERS = {"HeraldPhone": "HeraldPhoneCheck", "HeraldEmail": "HeraldEmailCheck", "HeraldPush": "HeraldPushCheck",
           "HeraldApple": "HeraldAppleCheck", "HeraldCleanup": None}
CHECKS = {check for check in WORKERS.values() if check}


def _names(text):
    """The quoted target names of a dependency list, its `.product(…)` entries left out."""
    return re.findall(r'"([\w-]+)"', re.sub(r"\.product\([^)]*\)", "", text))


def _lists():
    """Named dependency lists (`let checks: [Target.Dependency] = [...] + other`), `+ other` expanded."""
    lists = {}
    for name, body, more in re.findall(r"^let (\w+): \[Target\.Dependency\] = \[(.*?)\]((?:[ \t]*\+[ \t]*\w+)*)$", PACKAGE, re.S | re.M):
        lists[name] = _names(body) + [d for listed in re.findall(r"\w+", more) for d in lists.get(listed, [])]
    return lists


def _targets():
    """{name: (kind, [dependency names], [plugin names])} of every target."""
    lists, targets = _lists(), {}
    pattern = r'\.(target|executableTarget|testTarget|systemLibrary|plugin)\(\s*name:\s*"([\w-]+)"(.*?)(?=\n        \.\w+\(|\n    \]\n\))'
    for kind, name, rest in re.findall(pattern, PACKAGE, re.S):
        deps = []
        dep_match = re.search(r"dependencies:\s*(\[.*?\])((?:\s*\+\s*\w+)*)", rest, re.S)
        if dep_match:
            deps = _names(dep_match.group(1)) + [d for listed in re.findall(r"\w+", dep_match.group(2)) for d in lists.get(listed, [])]
        plugin_match = re.search(r"plugins:\s*\[(.*?)\]", rest, re.S)
        targets[name] = (kind, deps, re.findall(r'"([\w-]+)"', plugin_match.group(1)) if plugin_match else [])
    return targets


TARGETS = _targets()
