#!/usr/bin/env bash
# Builds what the device check carries to a bare GPU machine (no Java there) into
# cuda-kernels/device/payload/ (git-ignored): a jlinked JDK 25 runtime, the engine jar, the real model.
# Then copy the checkout with the payload to the GPU machine and run cuda-kernels/device/run-device-check.sh
# there from the repository root (see cuda-kernels/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"
MODELS=${PAGEWARDEN_MODELS_DIR:-../shared/models}
P=cuda-kernels/device/payload
LIMIT_MIB=60   # kept small enough to copy with the working tree in one 64 MiB transfer

"$JAVA_HOME/bin/java" -version 2>&1 | grep -q 'version "25' || { echo "build-payload.sh: JAVA_HOME must be a JDK 25 ($JAVA_HOME)" >&2; exit 1; }
for f in stories260K.bin tok512.bin; do
    [ -f "$MODELS/$f" ] || { echo "build-payload.sh: $MODELS/$f missing (set PAGEWARDEN_MODELS_DIR)" >&2; exit 1; }
done
./mvnw -q -o -DskipTests package -pl cuda-kernels -am
rm -rf "$P"
mkdir -p "$P/models"
"$JAVA_HOME/bin/jlink" --add-modules java.base,jdk.incubator.vector,java.logging,jdk.unsupported,java.management \
    --strip-debug --no-header-files --no-man-pages --compress=zip-6 --output "$P/jdk"
cp cuda-kernels/target/pagewarden-engine.jar "$P/"
cp "$MODELS/stories260K.bin" "$MODELS/tok512.bin" "$P/models/"
# the jar must hold JCuda and its linux driver binding, nothing else native
unzip -l "$P/pagewarden-engine.jar" | grep -q 'lib/libJCudaDriver-.*-linux-x86_64.so' \
    || { echo "build-payload.sh: engine jar lacks the JCuda driver natives" >&2; exit 1; }
size=$(du -sm "$P" | cut -f1)
echo "build-payload.sh: payload $size MiB in $P"
[ "$size" -le "$LIMIT_MIB" ] || { echo "build-payload.sh: payload over $LIMIT_MIB MiB" >&2; exit 1; }
