#!/usr/bin/env bash
# The engine check on a GPU machine: builds nothing, runs the prepared payload there.
# Same as cuda-kernels/device/run-device-check.sh (see cuda-kernels/README.md); pass --dry-run to only
# check the payload and whether a usable GPU is present. Build the payload first with
# cuda-kernels/device/build-payload.sh (a jlinked JDK 25, the engine jar and the model fixtures).
exec "$(dirname "$0")/../device/run-device-check.sh" "$@"
