#!/usr/bin/env bash
# Builds Herald's libFuzzer targets (fuzz/targets/*.swift) with `swiftc -sanitize=fuzzer,address`
# and runs each for a fixed time. Exits non-zero on the first crash, leak or broken invariant,
# leaving the input that did it under .build-fuzz/artifacts/<target>/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]     default: 60 s each, every target
#
# The code under test is compiled from the project's own sources, not copied: the wire
# layer (Sources/HeraldRuntime/Wire without the broker topology, and each channel's job type),
# phone numbers, the masking used in logs, the email address helpers and the continue-URL policy
# of email links, herald-api's hand-written request decoders (JSONFields, FormFields and the
# FieldRule checks they share: the parts without Hummingbird), and
# the two pure-Swift files of the AMQP library it needs (properties and field values), built
# as a small module named AMQP so the sources compile unchanged.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$ROOT/.build-fuzz"
SECONDS_EACH="${1:-60}"
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  for f in fuzz/targets/*.swift; do TARGETS+=("$(basename "$f" .swift)"); done
fi

log() { printf '[fuzz] %s\n' "$*" >&2; }

SWIFTC="${SWIFTC:-swiftc}"
mkdir -p "$OUT/amqp"
AMQP_SOURCES=(Sources/AMQP/AMQPFieldValue.swift Sources/AMQP/AMQPProperties.swift)
SOURCES=()
for f in Sources/HeraldRuntime/Wire/*.swift; do
  case "$(basename "$f")" in HeraldTopology.swift) ;; *) SOURCES+=("$f") ;; esac
done
# Phone/ less the classifier, which calls libphonenumber (C++) and is tested by the unit tests.
SOURCES+=(Sources/HeraldRuntime/Logging/Redact.swift Sources/HeraldWire/Phone/PhoneNumber.swift Sources/HeraldPhoneCheck/Phone/PhoneNumberType.swift Sources/HeraldPhoneCheck/Phone/PhoneNumberInfo.swift
  Sources/HeraldWire/Phone/SMSVerificationJob.swift Sources/HeraldWire/Email/EmailActionJob.swift
  Sources/HeraldWire/Push/PushVerificationJob.swift Sources/HeraldWire/Cleanup/CleanupRunJob.swift
  Sources/HeraldWire/Email/EmailAddress.swift Sources/HeraldEmail/Link/EmailLinkPolicy.swift Sources/HeraldWire/Phone/SMSVerificationJob+AppVerification.swift
  Sources/HeraldAPI/Server/APIFailure.swift Sources/HeraldAPI/Server/FieldRule.swift Sources/HeraldAPI/Server/JSONFields.swift Sources/HeraldAPI/Verify/FormFields.swift
  Sources/HeraldAPI/V1/V1DecodingFailure.swift)
# One module of them all: the runtime's and the channels' files as they are, less their
# imports of each other's modules.
mkdir -p "$OUT/src"
rm -f "$OUT"/src/*.swift
UNDER_TEST=()
for f in "${SOURCES[@]}"; do
  copy="$OUT/src/$(echo "$f" | tr / _)"
  grep -v '^import Herald' "$f" >"$copy"
  UNDER_TEST+=("$copy")
done

log "building the AMQP properties module"
# -sanitize=fuzzer on a library adds only the coverage instrumentation; libFuzzer's main is
# linked into each target. ld.gold's "cannot export local symbol __asan_*" warnings are noise.
"$SWIFTC" -parse-as-library -O -emit-module -emit-library -static -module-name AMQP -sanitize=fuzzer,address \
  -emit-module-path "$OUT/amqp/AMQP.swiftmodule" -o "$OUT/amqp/libAMQP.a" "${AMQP_SOURCES[@]}" >"$OUT/build-amqp.log" 2>&1 \
  || { cat "$OUT/build-amqp.log" >&2; exit 1; }

status=0
for target in "${TARGETS[@]}"; do
  source="fuzz/targets/$target.swift"
  [ -f "$source" ] || { log "no such target: $target"; exit 64; }
  log "building $target"
  "$SWIFTC" -parse-as-library -O -sanitize=fuzzer,address -module-name HeraldFuzz \
    -I "$OUT/amqp" -L "$OUT/amqp" -lAMQP -o "$OUT/fuzz-$target" "${UNDER_TEST[@]}" "$source" >"$OUT/build-$target.log" 2>&1 \
    || { grep -v "Cannot export local symbol" "$OUT/build-$target.log" >&2; exit 1; }
  corpus="$OUT/corpus/$target"
  artifacts="$OUT/artifacts/$target/"
  mkdir -p "$corpus" "$artifacts"
  # Seeds: the committed examples (valid inputs and known-bad ones); new finds stay in .build-fuzz.
  [ -d "fuzz/corpus/$target" ] && cp -n fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
  dict=()
  [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
  log "running $target for ${SECONDS_EACH}s"
  if ! "$OUT/fuzz-$target" "$corpus" "${dict[@]}" -max_total_time="$SECONDS_EACH" -max_len=4096 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts" >"$OUT/$target.log" 2>&1; then
    log "$target FAILED; input saved in $artifacts; log: $OUT/$target.log"
    grep -E "ERROR|Fatal error|precondition|==[0-9]+==" "$OUT/$target.log" | head -n 20 >&2 || true
    status=1
    continue
  fi
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$OUT/$target.log" | grep -Eo '[0-9]+$' || echo "?")
  edges=$(grep -Eo 'cov: [0-9]+' "$OUT/$target.log" | tail -n1 | grep -Eo '[0-9]+' || echo "?")
  log "$target: 0 crashes in $runs runs (${SECONDS_EACH}s, $edges coverage points)"
done
exit "$status"
