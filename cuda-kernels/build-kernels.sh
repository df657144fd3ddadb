#!/usr/bin/env bash
# Regenerates the committed kernel binaries from src/main/cuda/*.cu:
#   an sm_90 cubin (Hopper: H100, H200) and compute_80 PTX (any GPU from Ampere on; the driver compiles it)
# into src/main/resources/dev/pagewarden/cuda/, and kernels.manifest with the SHA-256 of every source
# and output. KernelManifestTest fails when the sources and the manifest disagree, so commit all of it.
# Needs nvcc (CUDA 13.0). Machines without nvcc build the project from the committed outputs.
set -euo pipefail
cd "$(dirname "$0")"
SRC=src/main/cuda
OUT=src/main/resources/dev/pagewarden/cuda
CUBIN_ARCH=sm_90
PTX_ARCH=compute_80
# No fast-math: the kernels must stay close to the CPU backend's IEEE float arithmetic.
FLAGS=(-O3 -std=c++17)

command -v nvcc >/dev/null || { echo "build-kernels.sh: nvcc not found (CUDA 13.0 toolkit needed to regenerate kernels)" >&2; exit 1; }
NVCC_VERSION=$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
mkdir -p "$OUT"
rm -f "$OUT"/*.cubin "$OUT"/*.ptx "$OUT"/kernels.manifest

sources=$(cd "$SRC" && ls *.cu *.cuh | LC_ALL=C sort)
for cu in $(cd "$SRC" && ls *.cu | LC_ALL=C sort); do
    name=${cu%.cu}
    # relative paths only: nothing of this machine ends up in the outputs
    (cd "$SRC" && nvcc "${FLAGS[@]}" -arch="$CUBIN_ARCH" -cubin -o "../resources/dev/pagewarden/cuda/$name.$CUBIN_ARCH.cubin" "$cu")
    (cd "$SRC" && nvcc "${FLAGS[@]}" -arch="$PTX_ARCH" -ptx -o "../resources/dev/pagewarden/cuda/$name.$PTX_ARCH.ptx" "$cu")
done

{
    echo "# Pagewarden kernel manifest: written by cuda-kernels/build-kernels.sh, checked by KernelManifestTest."
    echo "nvcc $NVCC_VERSION"
    echo "flags ${FLAGS[*]}"
    echo "cubin $CUBIN_ARCH"
    echo "ptx $PTX_ARCH"
    for f in $sources; do
        echo "source $(sha256sum "$SRC/$f" | cut -d' ' -f1) $f"
    done
    for f in $(cd "$OUT" && ls *.cubin *.ptx | LC_ALL=C sort); do
        echo "output $(sha256sum "$OUT/$f" | cut -d' ' -f1) $f"
    done
} > "$OUT/kernels.manifest"
echo "build-kernels.sh: wrote $(ls "$OUT" | wc -l) files to $OUT (nvcc $NVCC_VERSION)"
