#!/usr/bin/env bash
# Builds what the platform check carries to the GPU machine into cuda-kernels/device/platform-payload/
# (git-ignored): the platform jar as xz-compressed tar parts (platform.part-a, platform.part-b) with their
# SHA-256 in SHA256SUMS. The runtime, make-model and bench-http come from the engine payload
# (cuda-kernels/device/build-payload.sh, built first: its JDK has the platform's modules).
# Part A is sized to travel in one copy (64 MiB) with the checkout and the engine payload, part B with the
# checkout alone; cuda-kernels/device/run-platform-check.sh reassembles and checks them (README: "The
# platform on the GPU").
# --rehearse: the same two parts for a rehearsal on this machine (cuda-kernels/device/rehearse.sh) from the
# jar already built, into $REHEARSE_DIR/arrive/platform-payload (part A 1 MiB, the fastest xz level).
set -euo pipefail
cd "$(dirname "$0")/../.."
. cuda-kernels/device/payload-lib.sh
: "${JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"
P=cuda-kernels/device/platform-payload
COPY_MIB=60   # what one copy may carry, with room below the 64 MiB limit
ENGINE_P=cuda-kernels/device/payload
REHEARSE=0
if [ "${1:-}" = --rehearse ]; then
    REHEARSE=1
    P=${REHEARSE_DIR:-/tmp/pw-rehearse}/arrive/platform-payload
    ENGINE_P=${REHEARSE_DIR:-/tmp/pw-rehearse}/arrive/payload
    export XZ_LEVEL=0
fi

[ -f "$ENGINE_P/SHA256SUMS" ] \
    || { echo "build-platform-payload.sh: no engine payload; run cuda-kernels/device/build-payload.sh ${1:+$1 }first" >&2; exit 1; }
command -v python3 >/dev/null && command -v xz >/dev/null || { echo "build-platform-payload.sh: needs python3 and xz" >&2; exit 1; }
[ "$REHEARSE" = 1 ] || ./mvnw -q -o -DskipTests package -pl platform-api -am
[ -f platform-api/target/pagewarden-platform.jar ] || { echo "build-platform-payload.sh: platform-api/target/pagewarden-platform.jar missing (build it first)" >&2; exit 1; }
rm -rf "$P"
S=$(mktemp -d /tmp/pw-platform-build.XXXX)
trap 'rm -rf "$S"' EXIT
mkdir -p "$P"
if [ "$REHEARSE" = 1 ]; then
    cp platform-api/target/pagewarden-platform.jar "$S/"
    pack_parts "$S" "$P/platform" 1
    ls -l "$P"
    exit 0
fi
stored_jar platform-api/target/pagewarden-platform.jar "$S/pagewarden-platform.jar"
tree_mib=$(( ($(git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {print s}') + 1048575) / 1048576 ))
engine_mib=$(( ($(du -sb "$ENGINE_P" | cut -f1) + 1048575) / 1048576 ))
part_a=$((COPY_MIB - tree_mib - engine_mib))
[ "$part_a" -gt 0 ] || { echo "build-platform-payload.sh: no room for part A beside the engine payload ($engine_mib MiB)" >&2; exit 1; }
pack_parts "$S" "$P/platform" "$part_a"
ls -l "$P"
b_mib=$(( ($(stat -c %s "$P/platform.part-b" 2>/dev/null || echo 0) + 1048575) / 1048576 ))
echo "build-platform-payload.sh: checkout $tree_mib MiB; call 1 carries the engine payload ($engine_mib MiB) and" \
    "platform.part-a ($part_a MiB); call 2 carries platform.part-b ($b_mib MiB) and SHA256SUMS"
[ $((tree_mib + b_mib)) -le "$COPY_MIB" ] || { echo "build-platform-payload.sh: part B does not fit one copy" >&2; exit 1; }
