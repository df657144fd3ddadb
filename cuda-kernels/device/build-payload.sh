#!/usr/bin/env bash
# Builds what the device check carries to a bare GPU machine (no Java there) into
# cuda-kernels/device/payload/ (git-ignored): a jlinked JDK 25 runtime (with the modules the platform
# needs too, so cuda-kernels/device/run-platform-check.sh runs on the same one), the engine jar and the
# real model, as xz-compressed tar parts with their SHA-256 (engine.part-a, SHA256SUMS). The scripts
# unpack it on the GPU machine. Then copy the checkout with the payload there and run
# cuda-kernels/device/run-device-check.sh from the repository root (see cuda-kernels/README.md).
# --rehearse: the payload for a rehearsal on this machine (cuda-kernels/device/rehearse.sh) from the jars
# already built, into $REHEARSE_DIR/arrive/payload: the same parts, with this JDK linked instead of a
# jlinked one, the jar as built and the fastest xz level.
set -euo pipefail
cd "$(dirname "$0")/../.."
. cuda-kernels/device/payload-lib.sh
: "${JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"
MODELS=${PAGEWARDEN_MODELS_DIR:-../shared/models}
P=cuda-kernels/device/payload
LIMIT_MIB=40   # the platform payload's first part travels with it in one 64 MiB copy
REHEARSE=0
if [ "${1:-}" = --rehearse ]; then
    REHEARSE=1
    P=${REHEARSE_DIR:-/tmp/pw-rehearse}/arrive/payload
    export XZ_LEVEL=0
fi
# the engine's modules, then the platform's (jdeps --print-module-deps over the platform jar's libraries),
# and jdk.security.auth, which embedded PostgreSQL looks up by reflection: as root it runs initdb and
# postgres in a user namespace (unshare -U) only when it can read the user id through it
MODULES=java.base,jdk.incubator.vector,java.logging,jdk.unsupported,java.management
MODULES=$MODULES,java.compiler,java.desktop,java.instrument,java.naming,java.net.http,java.prefs,java.scripting
MODULES=$MODULES,java.security.jgss,java.sql,java.sql.rowset,java.transaction.xa,java.xml,jdk.jfr,jdk.management,jdk.net
MODULES=$MODULES,jdk.security.auth

"$JAVA_HOME/bin/java" -version 2>&1 | grep -q 'version "25' || { echo "build-payload.sh: JAVA_HOME must be a JDK 25 ($JAVA_HOME)" >&2; exit 1; }
for f in stories260K.bin tok512.bin; do
    [ -f "$MODELS/$f" ] || { echo "build-payload.sh: $MODELS/$f missing (set PAGEWARDEN_MODELS_DIR)" >&2; exit 1; }
done
command -v python3 >/dev/null && command -v xz >/dev/null || { echo "build-payload.sh: needs python3 and xz" >&2; exit 1; }
[ "$REHEARSE" = 1 ] || ./mvnw -q -o -DskipTests package -pl inference-core/cli -am
[ -f inference-core/cli/target/pagewarden-engine.jar ] || { echo "build-payload.sh: inference-core/cli/target/pagewarden-engine.jar missing (build it first)" >&2; exit 1; }
# the jar must hold JCuda and its linux driver binding, nothing else native
unzip -l inference-core/cli/target/pagewarden-engine.jar > /tmp/pw-engine-jar.txt
grep -q 'lib/libJCudaDriver-.*-linux-x86_64.so' /tmp/pw-engine-jar.txt \
    || { echo "build-payload.sh: engine jar lacks the JCuda driver natives" >&2; exit 1; }
rm -rf "$P"
mkdir -p "$P"
S=$(mktemp -d /tmp/pw-payload-build.XXXX)
trap 'rm -rf "$S"' EXIT
mkdir -p "$S/models" "$P"
if [ "$REHEARSE" = 1 ]; then
    ln -s "$JAVA_HOME" "$S/jdk"   # the scripts run $P/jdk/bin/java either way
else
    # zip-0: xz compresses the runtime's classes better than jlink's own zip
    "$JAVA_HOME/bin/jlink" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages --compress=zip-0 \
        --output "$S/jdk" 2>&1 | grep -v 'incubator modules' || true
fi
if [ "$REHEARSE" = 1 ]; then
    cp inference-core/cli/target/pagewarden-engine.jar "$S/"   # as built: the rewrite only makes the parts smaller
else
    stored_jar inference-core/cli/target/pagewarden-engine.jar "$S/pagewarden-engine.jar"
fi
cp "$MODELS/stories260K.bin" "$MODELS/tok512.bin" "$S/models/"
pack_parts "$S" "$P/engine"
size=$(du -sm "$P" | cut -f1)
echo "build-payload.sh: payload $size MiB in $P (unpacked: $(du -sm "$S" | cut -f1) MiB)"
[ "$REHEARSE" = 1 ] || [ "$size" -le "$LIMIT_MIB" ] || { echo "build-payload.sh: payload over $LIMIT_MIB MiB" >&2; exit 1; }
