"""Herald's own checks of deploy/, which scripts/check-deploy.sh runs after the real tools
(`kubectl kustomize`, kubernetes-validate, systemd-analyze, promtool; see deploy/README.md).

  check_deploy.py kubernetes RENDERED.yaml...   custom resources against deploy/schemas, then Herald's rules
  check_deploy.py rabbitmq EXPORT.json DECLARED_VHOST IMPORTED_VHOST [GENERATED.json]
                                                compare deploy/rabbitmq/definitions.json with the broker
  check_deploy.py observability                 alert rules and dashboard name only documented metrics
  check_deploy.py systemd                       Herald's rules for deploy/systemd
  check_deploy.py cron                          Herald's rules for deploy/cron

Runs with the venv check-deploy.sh makes (PyYAML, jsonschema).
"""
import copy
import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
KINDS = {"sms": 9101, "email": 9102, "push": 9103, "cleanup": 9104, "apple": 9105}  # JobKind.defaultOpsPort
HASHING_KINDS = {"sms", "email", "push", "apple"}  # they hash codes, links, push secrets, relay addresses (secrets.hmac_keys)
API = "herald-api"  # Sources/herald-api: HTTP, no queue; reads the key ring too (API keys, the checks)
API_OPS_PORT = 9106  # APIConfiguration.defaultOpsPort
API_PORT = 8090  # APIConfiguration.port (api.port)
LOOPBACK = ("127.", "::1", "localhost")  # ClearTextPolicy: clear text only there unless api.allow_insecure_transport
SCHEMAS = ROOT / "deploy/schemas"  # custom resources' schemas: <apiVersion with _>_<kind>.json (deploy/schemas/README.md)

errors: list[str] = []


def fail(where: str, message: str) -> None:
    errors.append(f"{where}: {message}")


def herald_config() -> dict:
    return yaml.safe_load((ROOT / "Config/herald.yaml").read_text())


# ---------------------------------------------------------------- kubernetes

def validate_custom_resource(where: str, obj: dict) -> None:
    """A custom resource against its schema in deploy/schemas. Kubernetes' own kinds are
    kubernetes-validate's, which check-deploy.sh runs first and which fails a kind that has neither."""
    path = SCHEMAS / f"{str(obj.get('apiVersion')).replace('/', '_')}_{obj.get('kind')}.json"
    if path.exists():
        import jsonschema
        for error in sorted(jsonschema.Draft7Validator(json.loads(path.read_text())).iter_errors(obj), key=str):
            fail(where, f"{'.'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}")


def pod_spec(obj: dict) -> dict | None:
    kind = obj.get("kind")
    if kind in ("Deployment", "Job"):
        return obj["spec"]["template"]["spec"]
    if kind == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return None


def check_rules(where: str, objects: list[dict]) -> None:
    """Herald's own rules, which no schema knows."""
    config = herald_config()
    namespace = config["amqp"]["namespace"]
    drain = config["runner"]["drain_timeout_seconds"]
    by_kind: dict[str, dict[str, dict]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], {})[obj["metadata"]["name"]] = obj

    configmaps = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("herald-config")]
    if len(configmaps) != 1:
        fail(where, "expected one generated ConfigMap herald-config-<hash>")
    elif configmaps[0].get("data", {}).get("herald.yaml") != (ROOT / "Config/herald.yaml").read_text():
        fail(where, "ConfigMap herald-config does not hold Config/herald.yaml")

    # Every Config/templates/<kind>/ directory is a ConfigMap the kind's worker mounts, and
    # its sms.templates_dir-style key (HERALD_<KIND>_TEMPLATES_DIR) points at the mount.
    for directory in sorted(p for p in (ROOT / "Config/templates").glob("*") if p.is_dir()):
        kind = directory.name
        files = {f.name: f.read_text() for f in directory.iterdir() if f.is_file()}
        maps = [o for o in objects if o["kind"] == "ConfigMap" and re.fullmatch(rf"herald-templates-{kind}(-[a-z0-9]+)?", o["metadata"]["name"])]
        if len(maps) != 1 or maps[0].get("data") != files:
            have = sorted(maps[0].get("data", {})) if len(maps) == 1 else None
            fail(where, f"ConfigMap herald-templates-{kind} must hold exactly Config/templates/{kind}/ "
                        f"({sorted(files)}); has {have}: list the files in Config/kustomization.yaml")
            continue
        deployment = by_kind.get("Deployment", {}).get(f"herald-{kind}")
        if deployment is None:
            continue
        pod = deployment["spec"]["template"]["spec"]
        volume = next((v["name"] for v in pod.get("volumes", []) if v.get("configMap", {}).get("name") == maps[0]["metadata"]["name"]), None)
        container = next(c for c in pod["containers"] if c["name"] == f"herald-{kind}")
        mount = next((m["mountPath"] for m in container.get("volumeMounts", []) if m["name"] == volume), None)
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        variable = f"HERALD_{kind.upper()}_TEMPLATES_DIR"
        if mount is None or env.get(variable) != mount:
            fail(where, f"Deployment herald-{kind} must mount herald-templates-{kind} and set {variable} to its path")

    for kind, port in KINDS.items():
        name = f"herald-{kind}"
        deployment = by_kind.get("Deployment", {}).get(name)
        if deployment is None:
            fail(where, f"no Deployment {name}")
            continue
        checked = check_process(where, deployment, name, port, drain, owner="KEDA")
        if checked is None:
            continue
        container, env = checked
        if kind in HASHING_KINDS and "HERALD_SECRETS_HMAC_KEYS_FILE" not in env:
            fail(where, f"Deployment {name}: HERALD_SECRETS_HMAC_KEYS_FILE must name the HMAC key ring file")
        service = by_kind.get("Service", {}).get(name)
        if service is None or not any(p.get("name") == "ops" for p in service["spec"].get("ports", [])):
            fail(where, f"no Service {name} with a port named ops (the ServiceMonitor scrapes it)")
        scaled = by_kind.get("ScaledObject", {}).get(name)
        if scaled is None:
            fail(where, f"no ScaledObject {name}")
        else:
            if scaled["spec"]["scaleTargetRef"]["name"] != name:
                fail(where, f"ScaledObject {name} must target Deployment {name}")
            queues = [t["metadata"].get("queueName") for t in scaled["spec"]["triggers"] if t["type"] == "rabbitmq"]
            if queues != [f"{namespace}.{kind}"]:
                fail(where, f"ScaledObject {name} must scale on queue {namespace}.{kind} (HeraldTopology.workQueue), has {queues}")
            for trigger in scaled["spec"]["triggers"]:
                auth = trigger.get("authenticationRef", {}).get("name")
                if auth and auth not in by_kind.get("TriggerAuthentication", {}):
                    fail(where, f"ScaledObject {name} names TriggerAuthentication {auth}, which is not there")

    # Prometheus Operator: each Service with an ops port is picked by a ServiceMonitor that scrapes `ops`.
    monitors = list(by_kind.get("ServiceMonitor", {}).values())
    for name in [f"herald-{kind}" for kind in KINDS] + [API]:
        service = by_kind.get("Service", {}).get(name)
        if service is None:
            continue
        if not any(selects(m["spec"].get("selector", {}), service["metadata"].get("labels", {}))
                   and any(e.get("port") == "ops" for e in m["spec"].get("endpoints", [])) for m in monitors):
            fail(where, f"Service {name}: no ServiceMonitor selects it and scrapes its port ops")

    check_api(where, objects)

    commands = {
        ("CronJob", "herald-cleanup-schedule"): [["heraldctl", "cleanup", "schedule"]],
        ("Job", "herald-migrate"): [["heraldctl", "migrate"], ["heraldctl", "topology", "declare"]],
    }
    for (kind, name), wanted in commands.items():
        obj = by_kind.get(kind, {}).get(name)
        if obj is None:
            fail(where, f"no {kind} {name}")
            continue
        pod = pod_spec(obj)
        run = [c.get("command", [])[:len(w)] for c, w in zip(pod.get("initContainers", []) + pod["containers"], wanted)]
        if run != wanted:
            fail(where, f"{kind} {name} must run {wanted}, runs {run}")

    for obj in objects:
        pod = pod_spec(obj)
        if pod is None:
            continue
        label = f"{obj['kind']} {obj['metadata']['name']}"
        if not pod.get("securityContext", {}).get("runAsNonRoot"):
            fail(where, f"{label}: securityContext.runAsNonRoot must be true")
        for container in pod.get("initContainers", []) + pod["containers"]:
            context = container.get("securityContext", {})
            if not context.get("readOnlyRootFilesystem") or context.get("allowPrivilegeEscalation") is not False:
                fail(where, f"{label}/{container['name']}: readOnlyRootFilesystem true and allowPrivilegeEscalation false")
            env = {e["name"]: e.get("value") for e in container.get("env", [])}
            mounted = [m["mountPath"] for m in container.get("volumeMounts", [])]
            for variable in ("HERALD_AMQP_URL", "HERALD_DATABASE_URL"):
                if variable in env:
                    fail(where, f"{label}/{container['name']}: {variable} in clear; use {variable}_FILE and a Secret")
                if variable + "_FILE" not in env:
                    fail(where, f"{label}/{container['name']}: {variable}_FILE missing")
            for variable, path in env.items():
                if variable.endswith("_FILE") and not any((path or "").startswith(m.rstrip("/") + "/") for m in mounted):
                    fail(where, f"{label}/{container['name']}: {variable} must name a file in a mounted volume")


def policy_admits(ports: list[dict] | None, port: int, protocol: str, named: dict[str, int]) -> bool:
    """Whether a NetworkPolicy rule's `ports` (None: every port) admit `port`/`protocol`."""
    if ports is None:
        return True
    for entry in ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        value = entry.get("port")
        if value is None:
            return True
        if isinstance(value, str) and named.get(value) == port:
            return True
        if isinstance(value, int) and value <= port <= entry.get("endPort", value):
            return True
    return False


def check_process(where: str, deployment: dict, name: str, port: int, drain: int, owner: str):
    """What every Herald process's Deployment needs (a worker's, herald-api's): no replicas (`owner`
    sets them), a grace past the drain, its container running it, the ops endpoint on `port` for
    the probes. Its container and env, or None when there is no container to check further."""
    spec = deployment["spec"]
    if "replicas" in spec:
        fail(where, f"Deployment {name} sets replicas; {owner} owns them")
    pod = spec["template"]["spec"]
    grace = pod.get("terminationGracePeriodSeconds", 30)
    if grace <= drain + 15:
        fail(where, f"Deployment {name}: terminationGracePeriodSeconds {grace} must exceed "
                    f"runner.drain_timeout_seconds ({drain}) + 15 s of shutdown")
    container = next((c for c in pod["containers"] if c["name"] == name), None)
    if container is None:
        fail(where, f"Deployment {name} has no container {name}")
        return None
    if container.get("command") != [name]:
        fail(where, f"Deployment {name} must run {name}, runs {container.get('command')}")
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    if env.get("HERALD_HTTP_PORT") != str(port):
        fail(where, f"Deployment {name}: HERALD_HTTP_PORT must be {port}")
    if env.get("HERALD_HTTP_HOST") != "0.0.0.0":
        fail(where, f"Deployment {name}: HERALD_HTTP_HOST must be 0.0.0.0 for the probes")
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    if ports.get("ops") != port:
        fail(where, f"Deployment {name}: container port 'ops' must be {port}")
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") not in ("ops", port):
            fail(where, f"Deployment {name}: {probe} must GET {path} on the ops port")
    return container, env


def check_api(where: str, objects: list[dict]) -> None:
    """herald-api (docs/api.md, deploy/README.md): its Deployment, Service, autoscaler and budget."""
    drain = herald_config()["runner"]["drain_timeout_seconds"]
    deployment = by_name(objects, "Deployment").get(API)
    if deployment is None:
        fail(where, f"no Deployment {API}")
        return
    pod_labels = deployment["spec"]["template"].get("metadata", {}).get("labels", {})
    checked = check_process(where, deployment, API, API_OPS_PORT, drain, owner="its HorizontalPodAutoscaler")
    if checked is None:
        return
    container, env = checked
    host = env.get("HERALD_API_HOST", "127.0.0.1")
    if host.startswith(LOOPBACK):
        fail(where, f"Deployment {API}: HERALD_API_HOST is {host} (api.host); the Service cannot reach a loopback address")
    tls = [v for v in ("HERALD_API_TLS_CERTIFICATE_FILE", "HERALD_API_TLS_KEY_FILE") if env.get(v)]
    if len(tls) == 1:
        fail(where, f"Deployment {API}: {tls[0]} without the other; api.tls.certificate_file and api.tls.key_file go together")
    if not tls and str(env.get("HERALD_API_ALLOW_INSECURE_TRANSPORT", "false")).lower() not in ("true", "yes", "on", "1") \
            and not host.startswith(LOOPBACK):
        fail(where, f"Deployment {API}: clear text on {host} needs HERALD_API_ALLOW_INSECURE_TRANSPORT=true or "
                    f"HERALD_API_TLS_*_FILE (else herald-api exits 78)")
    try:
        api_port = int(env.get("HERALD_API_PORT", API_PORT))
    except ValueError:
        fail(where, f"Deployment {API}: HERALD_API_PORT is not a port")
        return
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    if ports.get("http") != api_port:
        fail(where, f"Deployment {API}: container port 'http' must be api.port ({api_port})")
    if "HERALD_SECRETS_HMAC_KEYS_FILE" not in env:
        fail(where, f"Deployment {API}: HERALD_SECRETS_HMAC_KEYS_FILE must name the HMAC key ring file (secrets.hmac_keys is required)")
    resources = container.get("resources", {})
    if not resources.get("requests", {}).get("cpu"):
        fail(where, f"Deployment {API}: resources.requests.cpu is what the HorizontalPodAutoscaler's utilisation is measured against")
    if not resources.get("limits", {}).get("memory"):
        fail(where, f"Deployment {API}: resources.limits.memory")

    service = by_name(objects, "Service").get(API)
    service_ports = {p.get("name"): p for p in (service or {}).get("spec", {}).get("ports", [])}
    if service is None or not selects({"matchLabels": service["spec"].get("selector", {})}, pod_labels):
        fail(where, f"no Service {API} selecting its pods")
    elif service_ports.get("http", {}).get("targetPort") not in ("http", api_port) or "ops" not in service_ports:
        fail(where, f"Service {API} must have port http (targetPort http) and port ops")

    autoscalers = [h for h in objects if h["kind"] == "HorizontalPodAutoscaler"
                   and h["spec"].get("scaleTargetRef", {}).get("kind") == "Deployment"
                   and h["spec"]["scaleTargetRef"].get("name") == API]
    minimum = 1
    if len(autoscalers) != 1:
        fail(where, f"one HorizontalPodAutoscaler must scale Deployment {API}, found {len(autoscalers)}")
    else:
        hpa = autoscalers[0]
        minimum = hpa["spec"].get("minReplicas", 1)
        if hpa["apiVersion"] != "autoscaling/v2":
            fail(where, f"HorizontalPodAutoscaler {hpa['metadata']['name']}: autoscaling/v2")
        if minimum < 2:
            fail(where, f"HorizontalPodAutoscaler {hpa['metadata']['name']}: minReplicas {minimum}; at least 2, so one pod can drain or move")
        if hpa["spec"].get("maxReplicas", 0) < minimum:
            fail(where, f"HorizontalPodAutoscaler {hpa['metadata']['name']}: maxReplicas below minReplicas")
        if not any(m.get("type") == "Resource" and m.get("resource", {}).get("name") == "cpu" for m in hpa["spec"].get("metrics", [])):
            fail(where, f"HorizontalPodAutoscaler {hpa['metadata']['name']}: scale on the cpu resource")

    budgets = [b for b in objects if b["kind"] == "PodDisruptionBudget" and selects(b["spec"].get("selector", {}), pod_labels)]
    if len(budgets) != 1:
        fail(where, f"one PodDisruptionBudget must select {API}'s pods, found {len(budgets)}")
    else:
        budget = budgets[0]["spec"]
        available = budget.get("minAvailable")
        if not isinstance(available, int) or not 1 <= available < minimum:
            fail(where, f"PodDisruptionBudget {budgets[0]['metadata']['name']}: minAvailable must be a number from 1 to "
                        f"below minReplicas ({minimum}), so a drain can evict one pod; has {available!r}")

    # Egress, where a policy restricts it, must still reach what herald-api talks to.
    named = {}
    egress = [p for p in objects if p["kind"] == "NetworkPolicy" and selects(p["spec"].get("podSelector", {}), pod_labels)
              and "Egress" in p["spec"].get("policyTypes", [])]
    if egress:
        rules = [r for p in egress for r in p["spec"].get("egress", [])]
        for what, needed in (("DNS (53/UDP)", [(53, "UDP")]), ("PostgreSQL (5432)", [(5432, "TCP")]),
                             ("RabbitMQ (5671 or 5672)", [(5671, "TCP"), (5672, "TCP")]), ("Apple's JWKS (443)", [(443, "TCP")])):
            if not any(policy_admits(r.get("ports"), port, protocol, named) for r in rules for port, protocol in needed):
                fail(where, f"{API}: its egress policies admit no {what}")


def mutation_self_test(where: str, objects: list[dict], label: str, mutations, check) -> None:
    """Each (name, mutate) breaks a copy of `objects` in one way: `check` must find it (and a
    mutation that cannot be applied is a failure of its own). The errors it finds are dropped."""
    for name, mutate in mutations:
        mutated = copy.deepcopy(objects)
        try:
            mutate(mutated)
        except (StopIteration, KeyError, ValueError, IndexError) as error:
            fail(where, f"{label} self-test could not apply '{name}': {error!r}")
            continue
        before = len(errors)
        check(where, mutated)
        detected = len(errors) > before
        del errors[before:]  # what the check found in the broken copy, not errors of the real objects
        if not detected:
            fail(where, f"{label} self-test: {name} was not detected")


def api_self_test(where: str, objects: list[dict]) -> None:
    """check_api must notice each of its rules broken: mutate a copy, expect a failure."""

    def api_pod(objs):
        return pod_spec(next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == API))

    def api_container(objs):
        return next(c for c in api_pod(objs)["containers"] if c["name"] == API)

    def set_env(objs, name, value):
        container = api_container(objs)
        container["env"] = [e for e in container["env"] if e["name"] != name] + ([{"name": name, "value": value}] if value is not None else [])

    def of_kind(objs, kind):
        return next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == API)

    def drop_egress_443(objs):
        for rule in of_kind(objs, "NetworkPolicy")["spec"]["egress"]:
            rule["ports"] = [p for p in rule["ports"] if p.get("port") != 443]

    mutations = [
        ("replicas set", lambda o: of_kind(o, "Deployment")["spec"].__setitem__("replicas", 2)),
        ("a loopback api.host", lambda o: set_env(o, "HERALD_API_HOST", "127.0.0.1")),
        ("clear text without api.allow_insecure_transport", lambda o: set_env(o, "HERALD_API_ALLOW_INSECURE_TRANSPORT", None)),
        ("api.port unlike the http port", lambda o: set_env(o, "HERALD_API_PORT", "8091")),
        ("no key ring", lambda o: set_env(o, "HERALD_SECRETS_HMAC_KEYS_FILE", None)),
        ("no CPU request", lambda o: api_container(o)["resources"]["requests"].pop("cpu")),
        ("a grace period within the drain", lambda o: api_pod(o).__setitem__("terminationGracePeriodSeconds", 30)),
        ("one replica at least", lambda o: of_kind(o, "HorizontalPodAutoscaler")["spec"].__setitem__("minReplicas", 1)),
        ("no PodDisruptionBudget", lambda o: o.remove(of_kind(o, "PodDisruptionBudget"))),
        ("a budget that blocks drains", lambda o: of_kind(o, "PodDisruptionBudget")["spec"].__setitem__("minAvailable", 2)),
        ("no ServiceMonitor for herald-api", lambda o: o.remove(of_kind(o, "ServiceMonitor"))),
        ("egress without Apple's JWKS", drop_egress_443),
    ]
    mutation_self_test(where, objects, "herald-api", mutations, check_rules)


# ---------------------------------------------------------------- kubernetes: least privilege

def pods(objects: list[dict]) -> list[tuple[str, dict, dict]]:
    """(label, pod spec, pod labels) of every object that makes pods."""
    out = []
    for obj in objects:
        spec = pod_spec(obj)
        if spec is None:
            continue
        template = obj["spec"]["template"] if obj["kind"] != "CronJob" else obj["spec"]["jobTemplate"]["spec"]["template"]
        out.append((f"{obj['kind']} {obj['metadata']['name']}", spec, template.get("metadata", {}).get("labels", {})))
    return out


def pod_of(objects: list[dict], kind: str, name: str) -> dict:
    """The pod spec of the `kind` object named `name` (StopIteration when there is none)."""
    return pod_spec(next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name))


def secret_key_of_file(pod: dict, container: dict, variable: str) -> tuple[str | None, str | None]:
    """The Secret and key a container's `<variable>` (a *_FILE path) is read from, if any: the
    key the volume's `items` project to that file, or without `items` the file's own name."""
    path = next((e.get("value") for e in container.get("env", []) if e["name"] == variable), None)
    if not path:
        return None, None
    for mount in container.get("volumeMounts", []):
        directory = mount["mountPath"].rstrip("/") + "/"
        if path.startswith(directory):
            volume = next((v for v in pod.get("volumes", []) if v["name"] == mount["name"]), {})
            secret, file = volume.get("secret", {}), path[len(directory):]
            key = next((i["key"] for i in secret.get("items", []) if i.get("path") == file), None) if "items" in secret else file
            return secret.get("secretName"), key
    return None, None


def secret_of_file(pod: dict, container: dict, variable: str) -> str | None:
    """The Secret a container's `<variable>` (a *_FILE path) is read from, if any."""
    return secret_key_of_file(pod, container, variable)[0]


def secrets_used(pod: dict) -> set[str]:
    """Every Secret a pod can read: secret and projected volumes, env and envFrom references."""
    names = set()
    for volume in pod.get("volumes", []):
        if "secret" in volume:
            names.add(volume["secret"].get("secretName"))
        for source in volume.get("projected", {}).get("sources", []):
            if "secret" in source:
                names.add(source["secret"].get("name"))
    for container in pod.get("initContainers", []) + pod.get("containers", []):
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                names.add(ref.get("name"))
        for source in container.get("envFrom", []):
            if "secretRef" in source:
                names.add(source["secretRef"].get("name"))
    return names


def selects(selector: dict, labels: dict) -> bool:
    """A Kubernetes label selector (matchLabels, matchExpressions) against a pod's labels."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        if (operator == "In" and labels.get(key) not in values) or (operator == "NotIn" and labels.get(key) in values) \
                or (operator == "Exists" and key not in labels) or (operator == "DoesNotExist" and key in labels):
            return False
    return True


def check_least_privilege(where: str, objects: list[dict]) -> None:
    """docs/operations.md, "Secrets" and "Network policy": each credential only where it is used."""
    all_pods = pods(objects)
    containers = [(label, pod, c) for label, pod, _ in all_pods for c in pod.get("initContainers", []) + pod["containers"]]
    workers = {f"Deployment herald-{kind}" for kind in KINDS} | {f"Deployment {API}"}  # the pods with an ops port

    # The HMAC key ring: a Secret of its own, in the hashing workers' and herald-api's pods and nowhere else.
    hashing = {f"Deployment herald-{kind}" for kind in HASHING_KINDS} | {f"Deployment {API}"}
    hmac = {secret_of_file(pod, c, "HERALD_SECRETS_HMAC_KEYS_FILE") for label, pod, c in containers if label in hashing}
    if len(hmac) != 1 or None in hmac:
        fail(where, f"the sms, email, push and apple workers and herald-api must read HERALD_SECRETS_HMAC_KEYS_FILE from one Secret volume, read {sorted(map(str, hmac))}")
    else:
        (hmac_secret,) = hmac
        for label, pod, _ in all_pods:
            if label not in hashing and hmac_secret in secrets_used(pod):
                fail(where, f"{label} can read the HMAC key ring (Secret {hmac_secret}); only the sms, email, push and apple workers and herald-api may")

    # The broker URL: a Secret no other credential comes from, the only one KEDA reads, and
    # KEDA reads the very key the pods read (amqp-url in the base; overlays/ha: connection_string).
    broker = {secret_key_of_file(pod, c, "HERALD_AMQP_URL_FILE") for _, pod, c in containers}
    broker_secret, broker_key = next(iter(broker)) if len(broker) == 1 else (None, None)
    if broker_secret is None or broker_key is None:
        fail(where, f"every container must read HERALD_AMQP_URL_FILE from one key of one Secret volume, read {sorted(map(str, broker))}")
    for label, pod, c in containers:
        for env in c.get("env", []):
            if env["name"].endswith("_FILE") and env["name"] != "HERALD_AMQP_URL_FILE" \
                    and secret_of_file(pod, c, env["name"]) in (broker_secret,):
                fail(where, f"{label}/{c['name']}: {env['name']} comes from the broker Secret {broker_secret}, which KEDA reads; give it a Secret of its own")
    for name, auth in by_name(objects, "TriggerAuthentication").items():
        spec = auth.get("spec", {})
        refs = spec.get("secretTargetRef", [])
        if not refs or any((r.get("name"), r.get("key")) != (broker_secret, broker_key) for r in refs):
            fail(where, f"TriggerAuthentication {name} must read only key {broker_key} of the broker Secret {broker_secret} "
                        f"(what the pods read), reads {[(r.get('name'), r.get('key')) for r in refs]}")
        for other in set(spec) - {"secretTargetRef"}:
            fail(where, f"TriggerAuthentication {name}: {other} gives KEDA more than the broker credentials")

    # Database roles: the migrate Job logs in as the migration role, every other pod as the worker role.
    database = {label: secret_of_file(pod, c, "HERALD_DATABASE_URL_FILE") for label, pod, c in containers}
    migrate = {v for k, v in database.items() if k == "Job herald-migrate"}
    others = {v for k, v in database.items() if k != "Job herald-migrate"}
    if len(migrate) != 1 or None in migrate or len(others) != 1 or None in others:
        fail(where, f"HERALD_DATABASE_URL_FILE must come from one Secret for Job herald-migrate ({sorted(map(str, migrate))}) "
                    f"and one for every other pod ({sorted(map(str, others))})")
    elif migrate == others:
        fail(where, f"Job herald-migrate and the workers share the database Secret {migrate.pop()}; the migration role's login must be its own")
    else:
        (migrate_secret,) = migrate
        for label, pod, _ in all_pods:
            if label != "Job herald-migrate" and migrate_secret in secrets_used(pod):
                fail(where, f"{label} can read the migration role's Secret {migrate_secret}")

    # The ops port stays in the cluster: every NetworkPolicy that selects a worker and governs
    # ingress admits the ops port only from pods (no ipBlock, no rule open to every source);
    # at least one selects each worker.
    policies = [p for p in objects if p["kind"] == "NetworkPolicy"]
    for label, pod, labels in all_pods:
        if label not in workers:
            continue
        ops_port = next((p["containerPort"] for c in pod["containers"] for p in c.get("ports", []) if p.get("name") == "ops"), None)
        governing = [p for p in policies if selects(p["spec"].get("podSelector", {}), labels)
                     and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])]
        if not governing:
            fail(where, f"{label}: no NetworkPolicy governs its ingress; the ops port must stay inside the cluster")
        for policy in governing:
            for rule in policy["spec"].get("ingress", []):
                ports = rule.get("ports")
                covers = ports is None or any(p.get("port") in (None, "ops", ops_port) or
                                              (isinstance(p.get("port"), int) and p.get("endPort", p["port"]) >= ops_port >= p["port"])
                                              for p in ports)
                sources = rule.get("from")
                if covers and (not sources or any("ipBlock" in peer for peer in sources)):
                    fail(where, f"NetworkPolicy {policy['metadata']['name']} admits {label}'s ops port from outside the cluster "
                                f"(an ingress rule without `from`, or with an ipBlock)")

    # herald-api's own port: admitted only from chosen peers, never from every source; its
    # egress restricted to what it talks to (check_api checks what must stay open).
    for label, pod, labels in all_pods:
        if label != f"Deployment {API}":
            continue
        named = {p["name"]: p["containerPort"] for c in pod["containers"] for p in c.get("ports", []) if "name" in p}
        governing = [p for p in policies if selects(p["spec"].get("podSelector", {}), labels)]
        for policy in governing:
            if "Ingress" not in policy["spec"].get("policyTypes", ["Ingress"]):
                continue
            for rule in policy["spec"].get("ingress", []):
                sources = rule.get("from")
                # No `from`, an empty peer, every namespace's every pod, or the whole address space.
                open_peer = not sources or any(peer in ({}, {"namespaceSelector": {}}) or
                                               peer.get("ipBlock", {}).get("cidr") in ("0.0.0.0/0", "::/0") for peer in sources)
                if open_peer and "http" in named and policy_admits(rule.get("ports"), named["http"], "TCP", named):
                    fail(where, f"NetworkPolicy {policy['metadata']['name']} admits {label}'s API port from every source; "
                                f"name the ingress's or front API's namespaces")
        if not any("Egress" in p["spec"].get("policyTypes", []) for p in governing):
            fail(where, f"{label}: no NetworkPolicy restricts its egress (DNS, PostgreSQL, RabbitMQ, HTTPS only)")


def by_name(objects: list[dict], kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def least_privilege_self_test(where: str, objects: list[dict]) -> None:
    """Each least-privilege rule must notice its own removal: mutate a copy, expect a failure."""

    def mount_hmac_in_cleanup(objs):
        sms, cleanup = pod_of(objs, "Deployment", "herald-sms"), pod_of(objs, "Deployment", "herald-cleanup")
        cleanup["volumes"] += [v for v in sms["volumes"] if v.get("secret", {}).get("secretName") and
                               "hmac" in v["name"]]

    def mount_hmac_in_migrate(objs):
        sms, job = pod_of(objs, "Deployment", "herald-sms"), pod_of(objs, "Job", "herald-migrate")
        job["volumes"] += [v for v in sms["volumes"] if "hmac" in v["name"]]

    def keda_reads_the_database(objs):
        auth = next(o for o in objs if o["kind"] == "TriggerAuthentication")
        secret = next(v["secret"]["secretName"] for v in pod_of(objs, "Deployment", "herald-sms")["volumes"] if "database" in v["name"])
        auth["spec"]["secretTargetRef"].append({"parameter": "password", "name": secret, "key": "database-url"})

    def migrate_as_worker(objs):
        job = pod_of(objs, "Job", "herald-migrate")
        worker = next(v["secret"]["secretName"] for v in pod_of(objs, "Deployment", "herald-sms")["volumes"] if v["name"] == "secrets-database")
        for v in job["volumes"]:
            if "database" in v["name"]:
                v["secret"]["secretName"] = worker

    def no_network_policy(objs):
        objs[:] = [o for o in objs if o["kind"] != "NetworkPolicy"]

    def api_port_open_to_all(objs):
        policy = next(o for o in objs if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == API)
        for rule in policy["spec"]["ingress"]:
            rule.pop("from", None)

    def api_egress_open(objs):
        policy = next(o for o in objs if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == API)
        policy["spec"]["policyTypes"] = ["Ingress"]
        policy["spec"].pop("egress")

    def mount_hmac_in_schedule(objs):
        sms, cron = pod_of(objs, "Deployment", "herald-sms"), pod_of(objs, "CronJob", "herald-cleanup-schedule")
        cron["volumes"] += [v for v in sms["volumes"] if "hmac" in v["name"]]

    def ops_open_to_all(objs):
        for o in objs:
            if o["kind"] == "NetworkPolicy":
                for rule in o["spec"].get("ingress", []):
                    rule.pop("from", None)

    mutations = [
        ("the HMAC key ring mounted in herald-cleanup", mount_hmac_in_cleanup),
        ("the HMAC key ring mounted in the migrate Job", mount_hmac_in_migrate),
        ("KEDA reading the database Secret", keda_reads_the_database),
        ("the migrate Job on the workers' database login", migrate_as_worker),
        ("no NetworkPolicy", no_network_policy),
        ("the ops port open to every source", ops_open_to_all),
        ("herald-api's port open to every source", api_port_open_to_all),
        ("herald-api's egress unrestricted", api_egress_open),
        ("the HMAC key ring mounted in the cleanup-schedule CronJob", mount_hmac_in_schedule),
    ]
    mutation_self_test(where, objects, "least-privilege", mutations, check_least_privilege)


# ---------------------------------------------------------------- kubernetes: high availability

RABBITMQ_CLUSTER = ("rabbitmq.com/v1beta1", "RabbitmqCluster")  # the RabbitMQ Cluster Operator's
POSTGRES_CLUSTER = ("postgresql.cnpg.io/v1", "Cluster")  # CloudNativePG's
HA_RENDER = "overlays_ha.yaml"  # deploy/kubernetes/overlays/ha as check-deploy.sh names its render


def rabbitmq_settings(text: str) -> dict[str, str]:
    """The `key = value` lines of a rabbitmq.conf (sysctl format), comments left out."""
    pairs = [line.split("=", 1) for line in text.splitlines() if "=" in line and not line.lstrip().startswith("#")]
    return {key.strip(): value.strip() for key, value in pairs}


def ha_clusters(objects: list[dict]) -> tuple[list[dict], list[dict]]:
    """The RabbitmqClusters and the CloudNativePG Clusters among `objects`."""
    return ([o for o in objects if (o.get("apiVersion"), o.get("kind")) == RABBITMQ_CLUSTER],
            [o for o in objects if (o.get("apiVersion"), o.get("kind")) == POSTGRES_CLUSTER])


def only_pods(peers: list[dict] | None, labels: dict) -> bool:
    """Whether a NetworkPolicy rule's `to`/`from` names nothing but pods (of the policy's
    namespace) that carry every one of `labels`."""
    return bool(peers) and all(set(peer) == {"podSelector"} and
                               labels.items() <= peer["podSelector"].get("matchLabels", {}).items() for peer in peers)


def check_ha(where: str, objects: list[dict]) -> None:
    """overlays/ha (deploy/README.md, "High availability"): RabbitMQ and PostgreSQL as clusters
    of their operators that outlive a node, and Herald's pods reaching them only through the
    Services that follow the cluster: the RabbitmqCluster's own Service and CloudNativePG's -rw."""
    brokers, databases = ha_clusters(objects)
    if not brokers and not databases and where != HA_RENDER:
        return
    if len(brokers) != 1 or len(databases) != 1:
        fail(where, f"high availability needs one RabbitmqCluster and one CloudNativePG Cluster, found {len(brokers)} and {len(databases)}")
        return
    rabbitmq, postgres = brokers[0], databases[0]
    rmq, pg = rabbitmq["metadata"]["name"], postgres["metadata"]["name"]

    # RabbitMQ: a majority outlives any one node, a minority stops serving instead of diverging,
    # and the nodes carry Herald's node settings.
    replicas = rabbitmq["spec"].get("replicas", 1)
    if replicas < 3 or replicas % 2 == 0:
        fail(where, f"RabbitmqCluster {rmq}: replicas {replicas}; an odd number, 3 or more, so a majority outlives a node")
    settings = rabbitmq_settings(rabbitmq["spec"].get("rabbitmq", {}).get("additionalConfig", ""))
    if settings.get("cluster_partition_handling") != "pause_minority":
        fail(where, f"RabbitmqCluster {rmq}: rabbitmq.additionalConfig must set cluster_partition_handling = pause_minority, "
                    f"has {settings.get('cluster_partition_handling')}")
    for key, value in rabbitmq_settings((ROOT / "deploy/rabbitmq/rabbitmq.conf").read_text()).items():
        if settings.get(key) != value:
            fail(where, f"RabbitmqCluster {rmq}: rabbitmq.additionalConfig must set {key} = {value} "
                        f"(deploy/rabbitmq/rabbitmq.conf), has {settings.get(key)}")

    # PostgreSQL: a primary and two standbys; a commit waits for one standby, so a failover loses
    # none, and no more than the standbys left when one is down.
    spec = postgres["spec"]
    instances = spec.get("instances", 1)
    synchronous = spec.get("postgresql", {}).get("synchronous")
    standbys = synchronous.get("number", 0) if synchronous else spec.get("minSyncReplicas", 0)  # minSyncReplicas: before 1.24
    if instances < 3:
        fail(where, f"Cluster {pg}: instances {instances}; 3 or more (a primary and two standbys)")
    if not 1 <= standbys <= instances - 2:
        fail(where, f"Cluster {pg}: {standbys} synchronous standbys; from 1 (a failover loses no commit) to instances - 2 "
                    f"({instances - 2}: writes go on with a standby down)")

    # Where every Herald container finds the broker and the database.
    app_secret = f"{pg}-app"  # the initdb owner's login; CloudNativePG writes {pg}-rw into uri and fqdn-uri
    logins = {r["passwordSecret"]["name"]: r for r in spec.get("managed", {}).get("roles", []) if r.get("login") and r.get("passwordSecret")}
    broker_url = (f"{rmq}-default-user", "connection_string")  # the operator's Secret; the host is Service {rmq}
    standby_service = re.compile(rf"\b{re.escape(pg)}-(ro|r)\b")
    for label, pod, _ in pods(objects):
        for container in pod.get("initContainers", []) + pod["containers"]:
            who = f"{label}/{container['name']}"
            secret, key = secret_key_of_file(pod, container, "HERALD_DATABASE_URL_FILE")
            if secret == app_secret:
                if key not in ("uri", "fqdn-uri"):
                    fail(where, f"{who}: HERALD_DATABASE_URL_FILE is key {key} of {app_secret}; uri or fqdn-uri (they name {pg}-rw)")
            elif secret in logins:
                role = logins[secret]
                if role.get("inRoles") != ["herald_worker"] or any(role.get(a) for a in ("superuser", "createdb", "createrole", "replication", "bypassrls")):
                    fail(where, f"{who}: the login of Secret {secret} ({role['name']}) must be a plain member of herald_worker")
            else:
                fail(where, f"{who}: HERALD_DATABASE_URL_FILE comes from {secret}; from {app_secret} (uri) or from the passwordSecret of "
                            f"a login role of Cluster {pg}, whose database-url names {pg}-rw (deploy/README.md)")
            if secret_key_of_file(pod, container, "HERALD_AMQP_URL_FILE") != broker_url:
                fail(where, f"{who}: HERALD_AMQP_URL_FILE must be key {broker_url[1]} of Secret {broker_url[0]} (Service {rmq})")
            named = [e.get("value") or "" for e in container.get("env", [])] + container.get("command", []) + container.get("args", [])
            if any(standby_service.search(text) for text in named):
                fail(where, f"{who} names a standby Service of {pg} ({pg}-ro or {pg}-r); Herald writes, only {pg}-rw will do")
        for volume in pod.get("volumes", []):
            source = volume.get("secret", {})
            if source.get("secretName") == f"{pg}-ca" and [i.get("key") for i in source.get("items", [])] != ["ca.crt"]:
                fail(where, f"{label}: volume {volume['name']} must project only ca.crt of Secret {pg}-ca "
                            f"(its ca.key signs the server's and the clients' certificates)")

    # herald-api's egress, which a policy restricts: PostgreSQL only to the primary (what -rw
    # selects), RabbitMQ only to the cluster's nodes.
    api = by_name(objects, "Deployment").get(API)
    api_labels = api["spec"]["template"].get("metadata", {}).get("labels", {}) if api else {}
    for policy in by_name(objects, "NetworkPolicy").values():
        if not api or not selects(policy["spec"].get("podSelector", {}), api_labels) or "Egress" not in policy["spec"].get("policyTypes", []):
            continue
        for rule in policy["spec"].get("egress", []):
            for what, ports, peers in (("PostgreSQL", [5432], {"cnpg.io/cluster": pg, "cnpg.io/instanceRole": "primary"}),
                                       ("RabbitMQ", [5671, 5672], {"app.kubernetes.io/name": rmq})):
                if any(policy_admits(rule.get("ports"), port, "TCP", {}) for port in ports) and not only_pods(rule.get("to"), peers):
                    fail(where, f"NetworkPolicy {policy['metadata']['name']} admits {API}'s {what} traffic to more than the pods "
                                f"labelled {peers}")


def ha_self_test(where: str, objects: list[dict]) -> None:
    """check_ha must notice each of its rules broken: mutate a copy, expect a failure."""
    brokers, databases = ha_clusters(objects)
    if not brokers or not databases:
        return
    pg = databases[0]["metadata"]["name"]

    def cluster(objs, key):
        return next(o for o in objs if (o["apiVersion"], o["kind"]) == key)

    def broker(objs):
        return cluster(objs, RABBITMQ_CLUSTER)["spec"]

    def postgres(objs):
        return cluster(objs, POSTGRES_CLUSTER)["spec"]

    def set_broker_config(objs, key, value):
        config = broker(objs)["rabbitmq"]
        lines = [line for line in config["additionalConfig"].splitlines() if line.split("=")[0].strip() != key]
        config["additionalConfig"] = "\n".join(lines + ([f"{key} = {value}"] if value is not None else [])) + "\n"

    def secret_volume(objs, kind, name, volume):
        return next(v["secret"] for v in pod_of(objs, kind, name)["volumes"] if v["name"] == volume)

    def api_egress(objs, port):
        policy = next(o for o in objs if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == API)
        return next(r for r in policy["spec"]["egress"] if any(p.get("port") == port for p in r.get("ports", [])))

    def env(objs, kind, name, variable, value):
        pod_of(objs, kind, name)["containers"][0]["env"].append({"name": variable, "value": value})

    def asynchronous(objs):  # neither form of synchronous replication
        postgres(objs)["postgresql"].pop("synchronous")
        postgres(objs).pop("minSyncReplicas", None)

    mutations = [
        ("no RabbitmqCluster", lambda o: o.remove(cluster(o, RABBITMQ_CLUSTER))),
        ("two RabbitMQ nodes", lambda o: broker(o).__setitem__("replicas", 2)),
        ("one RabbitMQ node", lambda o: broker(o).__setitem__("replicas", 1)),
        ("partitions healed by autoheal", lambda o: set_broker_config(o, "cluster_partition_handling", "autoheal")),
        ("RabbitMQ's own max_message_size", lambda o: set_broker_config(o, "max_message_size", None)),
        ("two PostgreSQL instances", lambda o: postgres(o).__setitem__("instances", 2)),
        ("asynchronous replication", asynchronous),
        ("commits waiting for both standbys", lambda o: postgres(o)["postgresql"]["synchronous"].__setitem__("number", 2)),
        ("the migrate Job on the owner's jdbc-uri",
         lambda o: secret_volume(o, "Job", "herald-migrate", "secrets-database-migrate")["items"][0].__setitem__("key", "jdbc-uri")),
        ("herald-sms on a database Secret the Cluster does not manage",
         lambda o: secret_volume(o, "Deployment", "herald-sms", "secrets-database").__setitem__("secretName", "herald-database-ro")),
        ("the workers' login in herald_migrate", lambda o: postgres(o)["managed"]["roles"][0].__setitem__("inRoles", ["herald_migrate"])),
        ("herald-email pointed at the -ro Service",
         lambda o: env(o, "Deployment", "herald-email", "HERALD_DATABASE_URL", f"postgresql://herald_app@{pg}-ro:5432/herald")),
        ("herald-cleanup on a broker Secret of its own",
         lambda o: secret_volume(o, "Deployment", "herald-cleanup", "secrets-broker").__setitem__("secretName", "herald-broker")),
        ("the database CA with its key", lambda o: secret_volume(o, "Deployment", API, "postgres-ca").pop("items")),
        ("herald-api's PostgreSQL egress to every instance",
         lambda o: api_egress(o, 5432)["to"][0]["podSelector"]["matchLabels"].pop("cnpg.io/instanceRole")),
        ("herald-api's RabbitMQ egress to any address", lambda o: api_egress(o, 5672).pop("to")),
    ]
    mutation_self_test(where, objects, "high-availability", mutations, check_ha)


def kubernetes(paths: list[str]) -> None:
    for path in paths:
        where = pathlib.Path(path).name
        objects = [o for o in yaml.safe_load_all(pathlib.Path(path).read_text()) if o]
        if not objects:
            fail(where, "renders no object")
            continue
        for obj in objects:
            name = f"{where}: {obj.get('kind')} {obj.get('metadata', {}).get('name')}"
            validate_custom_resource(name, obj)
        try:
            before_rules = len(errors)
            check_rules(where, objects)
            if len(errors) == before_rules:
                api_self_test(where, objects)
            before = len(errors)
            check_least_privilege(where, objects)
            if len(errors) == before:
                least_privilege_self_test(where, objects)
            before = len(errors)
            check_ha(where, objects)
            if len(errors) == before:
                ha_self_test(where, objects)
        except (KeyError, TypeError, AttributeError) as error:  # a malformed object the schemas already reported
            fail(where, f"Herald's rules could not be checked: missing or malformed {error}")
        print(f"kubernetes: {where}: {len(objects)} objects checked")


# ---------------------------------------------------------------- systemd

def unit_settings(path: pathlib.Path) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")) and "=" in line:
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def systemd() -> None:
    drain = herald_config()["runner"]["drain_timeout_seconds"]
    directory = ROOT / "deploy/systemd"
    hardening = {"DynamicUser": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "NoNewPrivileges": "yes",
                 "PrivateTmp": "yes", "CapabilityBoundingSet": ""}
    # Each long-running process is a template (instance = ops port) with the credentials it uses:
    # the URLs, and the HMAC key ring for the hashing workers and herald-api only.
    for name in [f"herald-{kind}" for kind in KINDS] + [API]:
        path = directory / f"{name}@.service"
        if not path.exists():
            fail("deploy/systemd", f"no {name}@.service")
            continue
        unit, where = unit_settings(path), path.name
        if not unit.get("ExecStart", [""])[0].split()[0].endswith(f"/{name}"):
            fail(where, f"ExecStart must run {name}")
        if "HERALD_HTTP_PORT=%i" not in unit.get("Environment", []):
            fail(where, "Environment=HERALD_HTTP_PORT=%i (the instance name is the ops port)")
        stop = unit.get("TimeoutStopSec", ["90"])[-1]
        if not stop.isdigit() or int(stop) <= drain + 15:
            fail(where, f"TimeoutStopSec={stop} must be whole seconds above runner.drain_timeout_seconds ({drain}) + 15")
        if unit.get("Restart") != ["on-failure"]:
            fail(where, "Restart=on-failure")
        credentials = {c.split(":")[0] for c in unit.get("LoadCredential", [])}
        hashing = name == API or name.removeprefix("herald-") in HASHING_KINDS
        if not {"amqp-url", "database-url"} <= credentials:
            fail(where, "LoadCredential= must provide amqp-url and database-url")
        if hashing and ("hmac-keys" not in credentials or "HERALD_SECRETS_HMAC_KEYS_FILE=%d/hmac-keys" not in unit.get("Environment", [])):
            fail(where, "LoadCredential=hmac-keys:… and Environment=HERALD_SECRETS_HMAC_KEYS_FILE=%d/hmac-keys")
        if not hashing and "hmac-keys" in credentials:
            fail(where, f"{name} loads the HMAC key ring; only the sms, email, push and apple workers and herald-api may")
    # herald-api reads its TLS files again on SIGHUP.
    api_unit = directory / f"{API}@.service"
    if api_unit.exists() and not any(re.fullmatch(r"\S*kill -(HUP|SIGHUP|s HUP) \$MAINPID", c) for c in unit_settings(api_unit).get("ExecReload", [])):
        fail(f"{API}@.service", "ExecReload=/bin/kill -HUP $MAINPID (herald-api reads its TLS files again on SIGHUP)")
    for unit_path in sorted(directory.glob("*.service")):
        if unit_path.name.startswith("herald-") and "@" not in unit_path.name and unit_path.stem.removeprefix("herald-") in set(KINDS) | {"api"}:
            fail(unit_path.name, "a long-running service is a template (instance = ops port)")
    for path in sorted(directory.glob("*.service")):
        unit = unit_settings(path)
        for key, value in hardening.items():
            if unit.get(key, [None])[-1] != value:
                fail(path.name, f"{key}={value}")
        for variable, credential in (("HERALD_AMQP_URL_FILE", "amqp-url"), ("HERALD_DATABASE_URL_FILE", "database-url")):
            if f"{variable}=%d/{credential}" not in unit.get("Environment", []):
                fail(path.name, f"Environment={variable}=%d/{credential}")
    commands = {"herald-cleanup-schedule.service": [["heraldctl", "cleanup", "schedule"]],
                "herald-migrate.service": [["heraldctl", "migrate"], ["heraldctl", "topology", "declare"]]}
    for name, wanted in commands.items():
        runs = [[pathlib.Path(c.split()[0]).name] + c.split()[1:len(w)] for c, w in zip(unit_settings(directory / name).get("ExecStart", []), wanted)]
        if runs != wanted:
            fail(name, f"must run {wanted}, runs {runs}")
    timer = unit_settings(directory / "herald-cleanup-schedule.timer")
    if timer.get("Unit") != ["herald-cleanup-schedule.service"] or not timer.get("OnCalendar"):
        fail("herald-cleanup-schedule.timer", "OnCalendar= and Unit=herald-cleanup-schedule.service")
    print(f"systemd: Herald's rules checked on {len(list(directory.iterdir()))} units")


def cron() -> None:
    """deploy/cron/herald-cleanup: an /etc/cron.d file (five time fields, a user, the command)."""
    path = ROOT / "deploy/cron/herald-cleanup"
    fields_ranges = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
    jobs = 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#") or re.match(r"^[A-Z_]+=", line):
            continue
        fields = line.split()
        where = f"{path.name}:{number}"
        if len(fields) < 7:
            fail(where, "an /etc/cron.d line is five time fields, a user and a command")
            continue
        for field, (low, high) in zip(fields[:5], fields_ranges):
            for part in field.split(","):
                match = re.fullmatch(r"(\*|(\d+)(-(\d+))?)(/(\d+))?", part)
                numbers = [int(n) for n in (match.group(2), match.group(4)) if n] if match else None
                if numbers is None or any(not low <= n <= high for n in numbers):
                    fail(where, f"bad time field {field!r}")
        if "heraldctl cleanup schedule" not in " ".join(fields[6:]):
            fail(where, "must run heraldctl cleanup schedule")
        jobs += 1
    for variable in ("HERALD_AMQP_URL_FILE", "HERALD_DATABASE_URL_FILE"):
        if not re.search(rf"^{variable}=/", path.read_text(), re.M):
            fail(path.name, f"{variable}=/… (credentials from files)")
    if jobs != 1:
        fail(path.name, f"one job expected, found {jobs}")
    print(f"cron: {path.name} checked")


# ---------------------------------------------------------------- rabbitmq

def topology_sets(definitions: dict, vhost: str) -> dict[str, set]:
    """Normalised sets of what matters in a definitions document, for one vhost."""
    def frozen(value):
        return json.dumps(value, sort_keys=True)
    pick = lambda kind: [x for x in definitions.get(kind, []) if x.get("vhost") == vhost]
    return {
        "exchanges": {(x["name"], x["type"], x.get("durable", True), x.get("auto_delete", False), x.get("internal", False),
                       frozen(x.get("arguments", {}))) for x in pick("exchanges")},
        "queues": {(x["name"], x.get("durable", True), x.get("auto_delete", False), frozen(x.get("arguments", {})))
                   for x in pick("queues")},
        "bindings": {(x["source"], x["destination"], x["destination_type"], x["routing_key"], frozen(x.get("arguments", {})))
                     for x in pick("bindings")},
        "policies": {(x["name"], x["pattern"], x.get("apply-to", "all"), int(x.get("priority", 0)), frozen(x["definition"]))
                     for x in pick("policies")},
    }


def compare(label: str, expected: dict[str, set], actual: dict[str, set], parts) -> None:
    for part in parts:
        for missing in sorted(expected[part] - actual[part]):
            fail(label, f"{part}: in deploy/rabbitmq/definitions.json only: {missing}")
        for extra in sorted(actual[part] - expected[part]):
            fail(label, f"{part}: on the broker only: {extra}")


def rabbitmq(export_path: str, declared_vhost: str, imported_vhost: str, generated: str | None) -> None:
    committed = json.loads((ROOT / "deploy/rabbitmq/definitions.json").read_text())
    expected = topology_sets(committed, "/")
    export = json.loads(pathlib.Path(export_path).read_text())
    # What `heraldctl topology declare` made (it declares no policy).
    compare(f"heraldctl topology declare (vhost {declared_vhost})", expected, topology_sets(export, declared_vhost),
            ["exchanges", "queues", "bindings"])
    # The file, imported with `rabbitmqctl import_definitions`, as the broker holds it.
    compare(f"import_definitions (vhost {imported_vhost})", expected, topology_sets(export, imported_vhost),
            ["exchanges", "queues", "bindings", "policies"])
    # The delivery-limit policy must match exactly the work queues, and carry amqp.delivery_limit.
    config = herald_config()
    queues = {q["name"] for q in committed["queues"]}
    work = {f"{config['amqp']['namespace']}.{kind}" for kind in KINDS}
    for policy in committed.get("policies", []):
        matched = {q for q in queues if re.search(policy["pattern"], q)}
        if "delivery-limit" in policy["definition"]:
            if matched != work:
                fail("definitions.json", f"policy {policy['name']} must match the work queues {sorted(work)}, matches {sorted(matched)}")
            if policy["definition"]["delivery-limit"] != config["amqp"]["delivery_limit"]:
                fail("definitions.json", f"policy {policy['name']}: delivery-limit must equal amqp.delivery_limit")
    if not any("delivery-limit" in p["definition"] for p in committed.get("policies", [])):
        fail("definitions.json", "no delivery-limit policy")
    if generated:
        compare("heraldctl topology export", expected, topology_sets(json.loads(pathlib.Path(generated).read_text()), "/"),
                ["exchanges", "queues", "bindings", "policies"])
    counts = ", ".join(f"{len(v)} {k}" for k, v in expected.items())
    print(f"rabbitmq: definitions.json ({counts}) compared with the broker" + (" and topology export" if generated else ""))


# ---------------------------------------------------------------- observability

def documented_metrics() -> set[str]:
    text = (ROOT / "docs/operations.md").read_text()
    return set(re.findall(r"^\| `(herald_[a-z0-9_]+)[`{]", text, re.M))


def used_metrics(expression: str) -> set[str]:
    names = set(re.findall(r"\b(herald_[a-z0-9_]+)", expression))
    return {re.sub(r"_(bucket|sum|count)$", "", n) if re.search(r"_(bucket|sum|count)$", n) and
            re.sub(r"_(bucket|sum|count)$", "", n) in documented_metrics() else n for n in names}


def observability() -> None:
    documented = documented_metrics()
    if not documented:
        fail("docs/operations.md", "no metric table rows found")
    rules = yaml.safe_load((ROOT / "deploy/prometheus/alerts.yaml").read_text())
    alerts = 0
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            for metric in used_metrics(rule["expr"]) - documented:
                fail("deploy/prometheus/alerts.yaml", f"{name}: metric {metric} is not in docs/operations.md")
            if "alert" in rule:
                alerts += 1
                runbook = rule.get("annotations", {}).get("runbook", "")
                anchor = runbook.split("#")[-1]
                headings = {re.sub(r"[^a-z0-9 -]", "", h.lower()).strip().replace(" ", "-")
                            for h in re.findall(r"^#+ (.+)$", (ROOT / "docs/operations.md").read_text(), re.M)}
                if not runbook.startswith("docs/operations.md#") or anchor not in headings:
                    fail("deploy/prometheus/alerts.yaml", f"{name}: annotation runbook must point at a heading of docs/operations.md, has '{runbook}'")
    dashboard = json.loads((ROOT / "deploy/grafana/herald.json").read_text())
    panels = [p for p in dashboard.get("panels", []) if p.get("type") != "row"]
    if not panels:
        fail("deploy/grafana/herald.json", "no panels")
    for panel in panels:
        for target in panel.get("targets", []):
            for metric in used_metrics(target.get("expr", "")) - documented:
                fail("deploy/grafana/herald.json", f"panel '{panel.get('title')}': metric {metric} is not in docs/operations.md")
    print(f"observability: {alerts} alerts and {len(panels)} dashboard panels checked")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 64
    command, args = argv[0], argv[1:]
    if command == "kubernetes":
        kubernetes(args)
    elif command == "rabbitmq":
        rabbitmq(args[0], args[1], args[2], args[3] if len(args) > 3 else None)
    elif command == "observability":
        observability()
    elif command == "systemd":
        systemd()
    elif command == "cron":
        cron()
    else:
        print(__doc__, file=sys.stderr)
        return 64
    for error in errors:
        print(f"check-deploy: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
