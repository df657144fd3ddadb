#!/usr/bin/env bash
# Rehearses both device scripts on this machine, without a GPU, nvidia-smi or network, as the GPU machine
# will run them: the rehearsal payloads from the jars already built (build-payload.sh --rehearse,
# build-platform-payload.sh --rehearse), then two runs as two calls to the same machine would make them -
#   1. run-device-check.sh --rehearse with the engine payload and platform.part-a arriving,
#   2. run-platform-check.sh --rehearse with platform.part-b and SHA256SUMS arriving (part A waits in the
#      parts store under /tmp since call 1),
#   3. run-platform-check.sh --rehearse on a fresh machine (an empty store) with everything but
#      platform.part-a: it must stop with exit 2 naming platform.part-a as missing.
# Every stage of 1 and 2 must end ok or skipped; each $OUT must hold at most 8 files and a summary.json.
# Needs the engine and platform jars (./mvnw package) and PAGEWARDEN_MODELS_DIR (stories260K.bin, tok512.bin).
# Leaves the outputs in $OUT (default: a folder under /tmp, printed) and removes everything else it made.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"
export JAVA_HOME
if [ -z "${PAGEWARDEN_MODELS_DIR:-}" ] && [ -d ../shared/models ]; then
    PAGEWARDEN_MODELS_DIR=$(cd ../shared/models && pwd)
fi
export PAGEWARDEN_MODELS_DIR
ROOT=$(mktemp -d /tmp/pw-rehearse.XXXX)
OUT_BASE=${OUT:-$ROOT.out}
mkdir -p "$OUT_BASE"
trap 'rm -rf "$ROOT"' EXIT
say() { echo "rehearse.sh: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# check_out DIR: at most 8 files, a summary.json whose stages ended ok or skipped (prints it)
check_out() {
    local n
    n=$(find "$1" -type f | wc -l)
    [ "$n" -le 8 ] || fail "$1 holds $n files (at most 8)"
    python3 - "$1/summary.json" <<'PY' || fail "$1/summary.json: a stage failed"
import json, sys
s = json.load(open(sys.argv[1]))
print(json.dumps({"stages": s["stages"], "ok": s["ok"]}, indent=1))
bad = [st for st in s["stages"] if st["status"] not in ("ok", "skipped")]
sys.exit(1 if bad or not s["stages"] else 0)
PY
}

t0=$SECONDS
export REHEARSE_DIR=$ROOT/machine
cuda-kernels/device/build-payload.sh --rehearse
cuda-kernels/device/build-platform-payload.sh --rehearse
ARRIVE=$REHEARSE_DIR/arrive
mkdir -p "$ROOT/later" "$ROOT/all"
cp "$ARRIVE"/payload/* "$ARRIVE"/platform-payload/* "$ROOT/all/" 2>/dev/null || true
cp "$ARRIVE/payload/SHA256SUMS" "$ROOT/all/engine.SHA256SUMS"
cp "$ARRIVE/platform-payload/SHA256SUMS" "$ROOT/all/platform.SHA256SUMS"
mv "$ARRIVE/platform-payload/platform.part-b" "$ARRIVE/platform-payload/SHA256SUMS" "$ROOT/later/"
say "payloads built in $((SECONDS - t0)) s"

say "call 1: the engine check, carrying the engine payload and platform.part-a"
t=$SECONDS
OUT=$OUT_BASE/device cuda-kernels/device/run-device-check.sh --rehearse || fail "run-device-check.sh --rehearse exit $?"
say "device check rehearsed in $((SECONDS - t)) s"
check_out "$OUT_BASE/device"
[ -z "$(ls -A "$ARRIVE/payload")" ] || fail "the engine parts were not moved to the store on arrival"

say "call 2: the platform check, carrying platform.part-b and SHA256SUMS"
mv "$ROOT/later"/* "$ARRIVE/platform-payload/"
t=$SECONDS
OUT=$OUT_BASE/platform cuda-kernels/device/run-platform-check.sh --rehearse || fail "run-platform-check.sh --rehearse exit $?"
say "platform check rehearsed in $((SECONDS - t)) s"
check_out "$OUT_BASE/platform"

say "a fresh machine: everything but platform.part-a arrives"
export REHEARSE_DIR=$ROOT/fresh
mkdir -p "$REHEARSE_DIR/arrive/payload" "$REHEARSE_DIR/arrive/platform-payload"
cp "$ROOT"/all/engine.part-* "$REHEARSE_DIR/arrive/payload/"
cp "$ROOT/all/engine.SHA256SUMS" "$REHEARSE_DIR/arrive/payload/SHA256SUMS"
cp "$ROOT/all/platform.part-b" "$REHEARSE_DIR/arrive/platform-payload/"
cp "$ROOT/all/platform.SHA256SUMS" "$REHEARSE_DIR/arrive/platform-payload/SHA256SUMS"
set +e
OUT=$OUT_BASE/fresh cuda-kernels/device/run-platform-check.sh --rehearse 2> "$ROOT/fresh.err"
rc=$?
set -e
grep -q 'missing: platform.part-a:' "$ROOT/fresh.err" && [ $rc = 2 ] \
    || { cat "$ROOT/fresh.err" >&2; fail "a fresh machine without platform.part-a: exit $rc, expected 2 naming platform.part-a"; }
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); p = s["stages"][0]; assert p["name"] == "payload" and p["status"] == "failed" and "platform.part-a" in p["reason"], p; print(json.dumps(p))' \
    "$OUT_BASE/fresh/summary.json" || fail "the fresh machine's summary does not name the missing part"
say "the fresh machine said: $(grep 'missing: platform.part-a' "$ROOT/fresh.err")"
say "both rehearsals passed in $((SECONDS - t0)) s; outputs in $OUT_BASE"
