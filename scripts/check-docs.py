#!/usr/bin/env python3
"""The docs that a new user trips on (issue 34), checked against the Swift sources they describe:

- the E.164 rule: `PhoneNumber.minimumDigits` and `maximumDigits`
  (Sources/HeraldWire/Phone/PhoneNumber.swift) against the `phone_number` pattern and
  description of every JSON Schema (docs/schemas, deploy/schemas), every E.164 digit range
  and pattern the docs state, and any such pattern written out in a Swift source;
- heraldctl: every command and option the docs show in code (`heraldctl dlq show --raw`,
  `dlq list`, a shell line) exists in Sources/heraldctl;
- worker kinds and job types: the statements that list them name every `JobKind` (with its
  `defaultOpsPort` where they give ports) and every job type, and "the N workers" counts them.

Exits 1 naming each mismatch.

    scripts/check-docs.py            (run by `make test`)
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
problems = []
DOCS = sorted([ROOT / "README.md", ROOT / "deploy/README.md", *(ROOT / "docs").rglob("*.md")])
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def rel(path):
    return path.relative_to(ROOT).as_posix()


def read(name):
    return (ROOT / name).read_text()


# ---------------------------------------------------------------------------------------------
# The E.164 rule.

phone_swift = read("Sources/HeraldWire/Phone/PhoneNumber.swift")
low = int(re.search(r"static let minimumDigits = (\d+)", phone_swift).group(1))
high = int(re.search(r"static let maximumDigits = (\d+)", phone_swift).group(1))
PHONE_PATTERN = "^\\+[1-9][0-9]{%d,%d}$" % (low - 1, high - 1)


def schema_phone_rules(node, path, found, phone=False):
    """Every property whose name mentions `phone`, and any other pattern for a `+` number."""
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            if "phone" in name and isinstance(sub, dict):
                found.append((f"{path}: {name}", sub.get("pattern"), sub.get("description", "")))
        pattern = node.get("pattern")
        if not phone and isinstance(pattern, str) and pattern.startswith("^\\+"):
            found.append((f"{path}: pattern", pattern, node.get("description", "")))
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    schema_phone_rules(sub, path, found, phone="phone" in name)
            else:
                schema_phone_rules(value, path, found)
    elif isinstance(node, list):
        for value in node:
            schema_phone_rules(value, path, found)


phone_rules = []
for schema in sorted([*(ROOT / "docs/schemas").glob("*.json"), *(ROOT / "deploy/schemas").glob("*.json")]):
    schema_phone_rules(json.loads(schema.read_text()), rel(schema), phone_rules)
if not phone_rules:
    problems.append("docs/schemas: no phone_number property found")
for where, pattern, description in phone_rules:
    if pattern != PHONE_PATTERN:
        problems.append(f"{where}: pattern {pattern!r}, PhoneNumber.swift needs {PHONE_PATTERN!r} ({low} to {high} digits)")
    if f"{low} to {high} digits" not in description:
        problems.append(f"{where}: description does not say '{low} to {high} digits': {description!r}")

# In the docs: any digit range ending at E.164's maximum, any `+` number pattern.
stated = set()
for doc in DOCS:
    text = doc.read_text()
    for match in re.finditer(r"(\d+)\s*(?:to|–|-)\s*(\d+) digits", text):
        if int(match.group(2)) == high:
            stated.add(rel(doc))
            if int(match.group(1)) != low:
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{rel(doc)}:{line}: '{match.group(0)}'; PhoneNumber.swift accepts {low} to {high} digits")
    for match in re.finditer(r"\^\\\+\[1-9\]\[0-9\]\{\d+,\d+\}\$", text):
        if match.group(0) != PHONE_PATTERN:
            line = text.count("\n", 0, match.start()) + 1
            problems.append(f"{rel(doc)}:{line}: pattern {match.group(0)}; PhoneNumber.swift needs {PHONE_PATTERN}")
# In Swift (an OpenAPI document, say): a `+` number pattern written out.
for swift in sorted((ROOT / "Sources").rglob("*.swift")):
    text = swift.read_text()
    for match in re.finditer(r"\\{1,2}\+\[1-9\]\[0-9\]\{(\d+),(\d+)\}", text):
        if (int(match.group(1)), int(match.group(2))) != (low - 1, high - 1):
            line = text.count("\n", 0, match.start()) + 1
            problems.append(f"{rel(swift)}:{line}: pattern {match.group(0)}; PhoneNumber.swift needs {PHONE_PATTERN}")
for doc in ("docs/sms.md", "docs/wire-contract.md"):
    if doc not in stated:
        problems.append(f"{doc}: states no E.164 digit range ('{low} to {high} digits')")

# ---------------------------------------------------------------------------------------------
# heraldctl: the command tree of Sources/heraldctl.


def kebab(name):
    """ArgumentParser's default names: DryRun → dry-run, messageID → message-id."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name)
    return re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", name).lower()


def masked(source):
    """`source` with comments and string contents blanked (same length), so braces and
    parentheses count only in code."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif source.startswith("/*", i):
            j = source.find("*/", i)
            j = n if j < 0 else j + 2
            out[i:j] = [c if c == "\n" else " " for c in source[i:j]]
            i = j
        elif source[i] == '"' or source.startswith('#"', i):
            hashes = len(source[i:]) - len(source[i:].lstrip("#"))
            quote = '"""' if source.startswith('"""', i + hashes) else '"'
            start = i + hashes + len(quote)
            close = quote + "#" * hashes
            j = start
            while j < n and not source.startswith(close, j):
                j += 2 if source[j] == "\\" and not hashes else 1
            j = min(n, j + len(close))
            out[start:j - len(close)] = [c if c == "\n" else " " for c in source[start:j - len(close)]]
            i = j
        else:
            i += 1
    return "".join(out)


class Command:
    def __init__(self, name, scope):
        self.name, self.scope = name, scope
        self.command_name, self.subcommands, self.default = None, [], None
        self.options, self.groups, self.resolved = set(), [], {}


structs = []  # Command, for every ParsableCommand and ParsableArguments
for swift in sorted((ROOT / "Sources/heraldctl").glob("*.swift")):
    source = swift.read_text()
    code = masked(source)
    # Scopes: the struct/extension/enum each brace opens, so nested commands find their parent.
    stack, pending = [], None
    declarations = {m.start(): m for m in re.finditer(r"\b(struct|extension|enum)\s+(\w+)\s*(:\s*([\w, &]+))?", code)}
    current = []  # (Command, its brace depth, where its body starts) of the structs being read
    for i, c in enumerate(code):
        if i in declarations:
            pending = declarations[i]
        if c == "{":
            if pending is not None:
                conforms = pending.group(4) or ""
                names = [s[0] for s in stack if s[0]]
                if pending.group(1) == "struct" and re.search(r"Parsable(Command|Arguments)", conforms):
                    command = Command(pending.group(2), names)
                    structs.append(command)
                    current.append((command, len(stack) + 1, i))
                stack.append((pending.group(2), pending))
                pending = None
            else:
                stack.append((None, None))
        elif c == "}":
            if current and current[-1][1] == len(stack):
                command, _, start = current.pop()
                body, text = code[start:i], source[start:i]
                # Only this struct's own lines: nested structs' bodies blanked.
                own = list(body)
                for m in re.finditer(r"\bstruct\s+\w+[^{]*\{", body):
                    level, j = 1, m.end()
                    while j < len(body) and level:
                        level += {"{": 1, "}": -1}.get(body[j], 0)
                        j += 1
                    own[m.start():j] = " " * (j - m.start())
                own = "".join(own)
                name = re.search(r"commandName:", own)
                if name:
                    command.command_name = re.match(r'commandName:\s*"([^"]+)"', text[name.start():]).group(1)
                subs = re.search(r"subcommands:\s*\[([^\]]*)\]", own)
                if subs:
                    command.subcommands = re.findall(r"(\w+)\.self", subs.group(1))
                default = re.search(r"defaultSubcommand:\s*(\w+)\.self", own)
                command.default = default.group(1) if default else None
                for m in re.finditer(r"@(Option|Flag)\b(\(([^()]|\([^()]*\))*\))?\s*(?:public\s+)?var\s+(\w+)", own):
                    args = text[m.start():m.end()]
                    custom = re.search(r'\.customLong\("([^"]+)"\)', args)
                    command.options.add("--" + (custom.group(1) if custom else kebab(m.group(4))))
                command.groups = re.findall(r"@OptionGroup\b[^\n]*?var\s+\w+\s*:\s*(\w+)", own)
            if stack:
                stack.pop()

by_name = {}
for command in structs:
    by_name.setdefault(command.name, []).append(command)


def resolve(parent, name):
    """A subcommand `name` of `parent`: the struct nested in it, else the top-level one."""
    candidates = by_name.get(name, [])
    for command in candidates:
        if command.scope and command.scope[-1] == parent.name:
            return command
    for command in candidates:
        if not command.scope:
            return command
    return candidates[0] if candidates else None


def options_of(command):
    options = set(command.options) | {"--help", "-h"}
    for group in command.groups:
        for other in by_name.get(group, []):
            options |= options_of(other)
    return options


root = next((c for c in by_name.get("Heraldctl", [])), None)
if root is None or not root.subcommands:
    problems.append("Sources/heraldctl: no Heraldctl command with subcommands found")
    root = Command("Heraldctl", [])
for command in structs:
    for sub in command.subcommands:
        found = resolve(command, sub)
        if found is None:
            problems.append(f"Sources/heraldctl: subcommand {sub} of {command.name} not found")
            continue
        command.resolved[found.command_name or kebab(found.name)] = found
    if command.default:
        command.default = resolve(command, command.default)


def name_of(command):
    return command.command_name or kebab(command.name)


def check_invocation(tokens, where):
    """`tokens`: the words after `heraldctl` in one invocation shown in the docs."""
    shown = f"{where}: heraldctl {' '.join(tokens)}"
    command = root
    for token in tokens:
        if re.fullmatch(r"[|;&)>]+|\d?>.*|<+|#.*", token):  # the shell's: a pipe, a redirection, a comment
            return
        for option in re.findall(r"(?<![\w-])--?[a-z][a-z0-9-]*", token):
            if option not in options_of(command) | (options_of(command.default) if command.default else set()):
                problems.append(f"{shown}: {name_of(command)} has no option {option}")
        word = token.strip("[](){}`'\",.:")
        if token.startswith("-") or not command.resolved or not re.fullmatch(r"[a-z][a-z-]*(\|[a-z][a-z-]*)*", word):
            continue  # an option, a placeholder (ID, RUN_ID, -), or a word of a command without subcommands
        names = word.split("|")  # `dlq list|show|replay|purge`
        unknown = [n for n in names if n not in command.resolved]
        if unknown and command.default:  # `migrate …`: its default subcommand's argument
            command = command.default
            continue
        for name in unknown:
            problems.append(f"{shown}: '{name}' is not a subcommand of {name_of(command)} ({', '.join(sorted(command.resolved))})")
        if len(names) > 1 or unknown:
            return
        command = command.resolved[names[0]]


def invocations(text):
    """(line, the words after `heraldctl`) for each invocation shown in code."""
    found = []
    fences = list(re.finditer(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", text, re.M | re.S))
    for fence in fences:
        for offset, line in enumerate(fence.group(1).split("\n")):
            for m in re.finditer(r"(?:^|[\s(=\"'])(?:\S*/)?heraldctl\s+([^\n]*)", line):
                found.append((text.count("\n", 0, fence.start(1)) + 1 + offset, m.group(1).split()))
    prose = text
    for fence in reversed(fences):
        prose = prose[:fence.start()] + "\n" * fence.group(0).count("\n") + prose[fence.end():]
    for m in re.finditer(r"(heraldctl\s+)?`([^`]+)`", prose):
        span = " ".join(m.group(2).split())
        words = span.split()
        line = prose.count("\n", 0, m.start()) + 1
        if words and words[0].split("/")[-1] == "heraldctl":
            segments = span.split(" | ")
            found.append((line, segments[0].split()[1:]))
            for segment in segments[1:]:  # `heraldctl migrate | migrate status | …`, or a pipe to another program
                if segment.split() and segment.split()[0] in root.resolved:
                    found.append((line, segment.split()))
        elif m.group(1) or (len(words) > 1 and words[0] in root.resolved and root.resolved[words[0]].resolved
                            and not words[0].endswith("(")):
            found.append((line, words))
    return found


for doc in DOCS:
    for line, tokens in invocations(doc.read_text()):
        check_invocation(tokens, f"{rel(doc)}:{line}")

# ---------------------------------------------------------------------------------------------
# Worker kinds and job types.

job_kind = read("Sources/HeraldRuntime/Wire/JobKind.swift")
KINDS = re.search(r"case ([a-z, ]+)\n", job_kind).group(1).replace(" ", "").split(",")
PORTS = dict(re.findall(r"case \.(\w+): (\d+)", job_kind))
if set(PORTS) != set(KINDS):
    problems.append(f"JobKind.swift: defaultOpsPort covers {sorted(PORTS)}, the kinds are {KINDS}")
JOBS = sorted({m for swift in (ROOT / "Sources").glob("Herald*/**/*.swift")
               for m in re.findall(r'static let name = "([a-z]+\.[a-z_.]+)"', swift.read_text())
               if m.split(".")[0] in KINDS})

for job in JOBS:
    if not (ROOT / f"docs/schemas/{job}.v1.json").exists():
        problems.append(f"docs/schemas: no {job}.v1.json")
    if f"### `{job}`" not in read("docs/wire-contract.md"):
        problems.append(f"docs/wire-contract.md: no section for `{job}`")

# (file, the statement, what it must name): each statement that lists the kinds or the jobs.
LISTS = [
    ("README.md", r"fleet of small Swift processes \(([^)]*)\)", "workers"),
    ("README.md", r"metrics are at `[^`]*` \([^)]*\)", "ports"),
    ("docs/operations.md", r"## Running the workers\s*```(.*?)```", "workers"),
    ("docs/operations.md", r"\| worker \| default port \|.*?\n\n", "ports"),
    ("docs/operations.md", r"The `queue` label is the worker kind \([^)]*\)", "kinds"),
    ("docs/operations.md", r"^\| `heraldctl enqueue [^\n]*", "jobs"),
    ("docs/configuration.md", r"^\| `http\.port` [^\n]*", "ports"),
    ("Config/herald.yaml", r"# 0: the kind's default \([^)]*\)", "ports"),
    ("deploy/README.md", r"on the ops port\s*\([^)]*\)", "ports"),
    ("docs/wire-contract.md", r"^\| routing key \| the job name: [^\n]*", "jobs"),
    ("docs/wire-contract.md", r"^\| `herald\.dlx` \|[^\n]*", "kinds"),
    ("docs/wire-contract.md", r"^### Queues, per kind [^\n]*", "kinds"),
]
for name, pattern, what in LISTS:
    match = re.search(pattern, read(name), re.M | re.S)
    if not match:
        problems.append(f"{name}: the statement /{pattern}/ is gone; update scripts/check-docs.py")
        continue
    text = match.group(0)
    if what == "workers":
        missing = [f"herald-{k}" for k in KINDS if f"herald-{k}" not in text]
    elif what == "kinds":
        missing = [k for k in KINDS if f"`{k}`" not in text]
    elif what == "jobs":
        missing = [j for j in JOBS if f"`{j}`" not in text]
    else:
        missing = [f"{k} {PORTS[k]}" for k in KINDS if not re.search(rf"\b{k}\b", text) or PORTS[k] not in text]
    if missing:
        line = read(name).count("\n", 0, match.start()) + 1
        problems.append(f"{name}:{line}: leaves out {', '.join(missing)}")

# "the four workers" when there are five.
for doc in DOCS:
    text = doc.read_text()
    for m in re.finditer(r"\b[Tt]he (\w+) (workers|work queues|worker Deployments)\b", text):
        if m.group(1) in NUMBERS.values() and m.group(1) != NUMBERS.get(len(KINDS)):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{rel(doc)}:{line}: '{m.group(0)}'; there are {NUMBERS.get(len(KINDS), len(KINDS))} ({', '.join(KINDS)})")

for problem in problems:
    print(problem, file=sys.stderr)
print(f"check-docs: {'ok' if not problems else f'{len(problems)} problems'} "
      f"(E.164 {low}-{high} digits, {len(structs)} heraldctl commands, kinds {', '.join(KINDS)}, {len(JOBS)} job types)")
sys.exit(1 if problems else 0)
