#!/usr/bin/env bash
# /v1's Swift types and routes, generated from docs/openapi.yaml by swift-openapi-generator
# (pinned in tools/openapi-generator/Package.swift, configured by its openapi-generator-config.yaml)
# into Sources/HeraldAPI/V1/Generated/. The generated code is committed, so the product's build
# does not build the generator; make test checks that it is current.
#
#   scripts/generate-openapi.sh           write the generated code (after editing docs/openapi.yaml)
#   scripts/generate-openapi.sh --check   exit 1 if the committed code is not what it would write,
#                                         or if the generator warns about the document
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOL="$ROOT/tools/openapi-generator"
TARGET="$ROOT/Sources/HeraldAPI/V1/Generated"
case "${1:-}" in
    ""|--check) ;;
    *) echo "usage: scripts/generate-openapi.sh [--check]" >&2; exit 64 ;;
esac

swift build --package-path "$TOOL" --product swift-openapi-generator --quiet
BIN="$(swift build --package-path "$TOOL" --show-bin-path)/swift-openapi-generator"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
"$BIN" generate "$ROOT/docs/openapi.yaml" --config "$TOOL/openapi-generator-config.yaml" \
    --output-directory "$OUT/code" >"$OUT/log" 2>&1 || { cat "$OUT/log" >&2; exit 1; }
# A warning is a part of the document the generated code does not carry: fixed in the document.
if grep -i -E "(warning|error): " "$OUT/log" >&2; then
    echo "generate-openapi: swift-openapi-generator warned about docs/openapi.yaml (above)" >&2
    exit 1
fi
if [ "${1:-}" = --check ]; then
    if ! diff -r -q "$OUT/code" "$TARGET" >&2; then
        echo "generate-openapi: Sources/HeraldAPI/V1/Generated is not docs/openapi.yaml's code; run scripts/generate-openapi.sh" >&2
        exit 1
    fi
    echo "generate-openapi: ok (Sources/HeraldAPI/V1/Generated matches docs/openapi.yaml)"
    exit 0
fi
rm -rf "$TARGET"
mkdir -p "$TARGET"
cp "$OUT/code/"*.swift "$TARGET/"
echo "generate-openapi: wrote $(ls "$TARGET" | wc -l) files to Sources/HeraldAPI/V1/Generated"
