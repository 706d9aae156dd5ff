"""A small kustomize for the subset deploy/kubernetes uses, for machines without kubectl.

  kustomize_lite.py DIR                  render DIR's kustomization (like `kubectl kustomize DIR`)
  kustomize_lite.py --compare A.yaml B.yaml   exit 1 unless both hold the same objects (order aside)

Supported kustomization fields: resources (files and directories), namespace, labels
(pairs, includeSelectors: false, includeTemplates), images (name, newName, newTag),
configMapGenerator (name, files; a content-hash suffix, though not kustomize's own digits), patches (path:
strategic-merge file, with a target (kind, name, group) to apply it to every object selected, or
target + inline JSON 6902 patch). Anything else is an error, so a kustomization that outgrows
this script fails loudly instead of rendering wrong.
scripts/check-deploy.sh compares its output with kubectl kustomize wherever kubectl exists.
"""
import copy
import hashlib
import json
import pathlib
import re
import sys

import yaml

SUPPORTED = {"apiVersion", "kind", "resources", "namespace", "labels", "images", "configMapGenerator", "patches"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "StorageClass", "PersistentVolume"}


def die(message: str) -> None:
    raise SystemExit(f"kustomize_lite: {message}")


def config_map_hash(name: str, data: dict) -> str:
    """After kustomize's api/hasher (sha256 of name and data, 10 characters); --compare ignores the digits."""
    encoded = json.dumps({"data": data, "kind": "ConfigMap", "name": name}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escape in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        encoded = encoded.replace(char, escape)
    digest = hashlib.sha256(encoded.encode()).hexdigest()[:10]
    return digest.translate(str.maketrans({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"}))


def pod_templates(obj: dict) -> list[dict]:
    kind = obj.get("kind")
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        return [obj["spec"]["template"]]
    if kind == "CronJob":
        return [obj["spec"]["jobTemplate"]["spec"]["template"]]
    return []


def strategic_merge(base, patch):
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = strategic_merge(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(patch, list) and all(isinstance(x, dict) and "name" in x for x in base + patch):
        # As kustomize does: the patch's items come first (in the patch's order), each merged
        # with the base's item of the same name if there is one, then the base's other items.
        named = {x["name"]: x for x in base}
        patched = [strategic_merge(named[item["name"]], item) if item["name"] in named else item for item in patch]
        return patched + [dict(x) for x in base if x["name"] not in {item["name"] for item in patch}]
    return patch


def json6902(obj: dict, operations: list[dict]) -> None:
    for op in operations:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = obj
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        key = (len(parent) if last == "-" else int(last)) if isinstance(parent, list) else last
        if op["op"] == "replace":
            parent[key] = op["value"]
        elif op["op"] == "add":
            parent.insert(key, op["value"]) if isinstance(parent, list) else parent.__setitem__(key, op["value"])
        elif op["op"] == "remove":
            del parent[key]
        else:
            die(f"unsupported JSON patch op {op['op']}")


def matches(obj: dict, target: dict) -> bool:
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    return (target.get("kind", obj["kind"]) == obj["kind"] and target.get("name", obj["metadata"]["name"]) == obj["metadata"]["name"]
            and target.get("group", group) == group)


def render(directory: pathlib.Path, renames: dict[str, str] | None = None) -> list[dict]:
    """Renders `directory`; `renames` collects generated names (name -> name-hash) across levels."""
    renames = {} if renames is None else renames
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unsupported = set(kustomization) - SUPPORTED
    if unsupported:
        die(f"{directory}: unsupported fields {sorted(unsupported)}")
    objects: list[dict] = []
    for resource in kustomization.get("resources", []):
        path = (directory / resource)
        if path.is_dir():
            objects += render(path, renames)
        else:
            objects += [o for o in yaml.safe_load_all(path.read_text()) if o]
    for generator in kustomization.get("configMapGenerator", []):
        data = {}
        for entry in generator.get("files", []):
            key, _, file = entry.partition("=") if "=" in entry else (pathlib.Path(entry).name, "", entry)
            data[key] = (directory / file).read_text()
        if set(generator) - {"name", "files"}:
            die(f"{directory}: unsupported configMapGenerator fields {sorted(set(generator) - {'name', 'files'})}")
        hashed = f"{generator['name']}-{config_map_hash(generator['name'], data)}"
        renames[generator["name"]] = hashed
        objects.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": hashed}, "data": data})
    for obj in objects:  # name references to generated ConfigMaps
        for template in pod_templates(obj):
            spec = template["spec"]
            for volume in spec.get("volumes", []):
                if "configMap" in volume:
                    volume["configMap"]["name"] = renames.get(volume["configMap"]["name"], volume["configMap"]["name"])
            for container in spec.get("initContainers", []) + spec.get("containers", []):
                for source in container.get("envFrom", []):
                    if "configMapRef" in source:
                        source["configMapRef"]["name"] = renames.get(source["configMapRef"]["name"], source["configMapRef"]["name"])
    for patch in kustomization.get("patches", []):
        if "path" in patch:
            body = yaml.safe_load((directory / patch["path"]).read_text())
            # With a target, the patch goes to every object it selects, whatever name it carries.
            target = patch.get("target", {"kind": body["kind"], "name": body["metadata"]["name"]})
            hits = [i for i, o in enumerate(objects) if matches(o, target)]
            for i in hits:
                own = copy.deepcopy(body)  # each object its own copy of what the patch adds
                own["metadata"]["name"] = objects[i]["metadata"]["name"]
                objects[i] = strategic_merge(objects[i], own)
        else:
            hits = [o for o in objects if matches(o, patch["target"])]
            for obj in hits:
                json6902(obj, yaml.safe_load(patch["patch"]))
        if not hits:
            die(f"{directory}: patch {patch} matches nothing")
    for label in kustomization.get("labels", []):
        if label.get("includeSelectors"):
            die(f"{directory}: labels with includeSelectors are not supported")
        for obj in objects:
            obj["metadata"].setdefault("labels", {}).update(label["pairs"])
            if label.get("includeTemplates"):
                if obj["kind"] == "CronJob":
                    obj["spec"]["jobTemplate"].setdefault("metadata", {}).setdefault("labels", {}).update(label["pairs"])
                for template in pod_templates(obj):
                    template.setdefault("metadata", {}).setdefault("labels", {}).update(label["pairs"])
    for image in kustomization.get("images", []):
        for obj in objects:
            for template in pod_templates(obj):
                for container in template["spec"].get("initContainers", []) + template["spec"].get("containers", []):
                    name, _, tag = container["image"].partition(":")
                    if name == image["name"]:
                        container["image"] = f"{image.get('newName', name)}:{image.get('newTag', tag)}" if image.get("newTag", tag) else image.get("newName", name)
    if "namespace" in kustomization:
        for obj in objects:
            if obj["kind"] not in CLUSTER_SCOPED:
                obj["metadata"]["namespace"] = kustomization["namespace"]
    return objects


def key(obj: dict) -> tuple:
    return (obj.get("apiVersion"), obj.get("kind"), obj["metadata"].get("namespace"), obj["metadata"]["name"])


def load_normalised(path: str) -> dict:
    """Objects by key, with the hash suffix of generated ConfigMap names (and references to them) blanked."""
    text = pathlib.Path(path).read_text()
    for obj in yaml.safe_load_all(text):
        name = (obj or {}).get("metadata", {}).get("name", "")
        if obj and obj["kind"] == "ConfigMap" and re.fullmatch(r".+-[a-z0-9]{10}", name):
            text = re.sub(rf"\b{re.escape(name)}\b", name[:-10] + "HASH", text)
    return {key(o): o for o in yaml.safe_load_all(text) if o}


def compare(first: str, second: str) -> int:
    a, b = load_normalised(first), load_normalised(second)
    different = 0
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            different += 1
            print(f"kustomize_lite: {k}: {'differs' if k in a and k in b else 'only in ' + (first if k in a else second)}", file=sys.stderr)
            if k in a and k in b:
                for line in _diff(a[k], b[k]):
                    print(f"  {line}", file=sys.stderr)
    return 1 if different else 0


def _diff(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from _diff(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: {json.dumps(a)[:80]} != {json.dumps(b)[:80]}"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    documents = render(pathlib.Path(sys.argv[1]))
    print(yaml.safe_dump_all(copy.deepcopy(documents), sort_keys=True, default_flow_style=False), end="")
