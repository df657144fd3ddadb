#!/usr/bin/env bash
# The GPU device check, in one call, on a bare machine with an NVIDIA GPU (see cuda-kernels/README.md):
#   1. gpu-check: GPU vs CPU logits (real model; random F32/F16/Q8_0/BF16 models with GQA), greedy tokens,
#      batch invariance, in-kernel tag/written-slot refusals, the writer shadow, device CRC32C vs the
#      frame checksum, scrub, device-to-device copy bandwidth; then the same check with each kernel
#      that is still off by default switched on (gemm, matvec1, fusedRope, graphs, attentionRows);
#   2. bench --backend gpu on generated models: 110M F16 at batch 1, 8, 32; 2.9B F16 (Llama-3.2-3B shape)
#      at batch 1, 8, 32, 64, as it is and with the GEMM kernels, a 512-token prefill with and without
#      them, the batch-1 matvec kernels; quantized copies of the 2.9B shape (QUANT_DTYPES) with the GEMM;
#      every bench with the step timing (-Dpagewarden.gpu.timing=true);
#   3. $OUT/summary.json: every stage's outcome {name, status ok|failed|skipped, reason, seconds, command},
#      every gpu-check verdict with its failures, decode tok/s and weight bandwidth vs the measured copy
#      bandwidth and the H200 HBM roofline, prefill tok/s, the timing table of each bench.
# Every stage has a budget; they add up to the run's total (printed at the start, under 8 minutes), and
# time a stage leaves goes to those after it. $OUT (default ./device-out) gets summary.json, summary.txt,
# gpu-check.json and results.tgz (every log and JSON), nothing else.
# The payload's parts are moved to /tmp/pw-parts on arrival and unpacked from there, so parts carried by
# an earlier run on the same machine count (README: "The platform on the GPU").
# Exit 0 every stage ok or skipped, 1 a stage failed, 2 no usable payload, 3 no usable GPU.
# Env: CPU_BENCH=1 (the CPU at batch 1 beside the 110M figure, from time left over), NEW=0 (skip the
# kernels still off by default), EXTRAS=1 (JCuda's launch path and safety checks on/off, from time left
# over), QUANT_DTYPES ("q4_k"; also q8_0, q6_k, bf16, ...; empty: none).
# --dry-run: checks the payload and the GPU, runs nothing on it.
# --rehearse: every stage with the same command lines on a machine without a GPU: the CPU backend
# (gpu-check --backend cpu), tiny shapes and sizes, the rehearsal payload (cuda-kernels/device/rehearse.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
. cuda-kernels/device/payload-lib.sh
. cuda-kernels/device/stages.sh
device_run_mode "${1:-}"

# What differs between the real run and its rehearsal: these variables, never the command lines.
if [ $MODE = rehearse ]; then
    R=${REHEARSE_DIR:-/tmp/pw-rehearse}
    ARRIVED=$R/arrive STORE=$R/parts P=$R/payload
    BACKEND=cpu CHECK_TOKENS=8 NEW_TOKENS=8 SWEEP=3
    TINY=dim=256,hidden=512,layers=2,heads=8,kv_heads=2,vocab=512,seq=256   # K-quant rows: 256 wide
    SMALL=$TINY BIG=$TINY SMALL_BATCHES=1,2 BIG_BATCHES=1,2 GEN=8 PROMPT=8 PREFILL=32 REPEATS=1 REPEATS_MAIN=1
    BUDGET_PCT=${BUDGET_PCT:-400}   # a busy CPU machine, not the GPU one
    QUANT_DTYPES=${QUANT_DTYPES-q4_k}
else
    ARRIVED=cuda-kernels/device STORE=/tmp/pw-parts P=/tmp/pw-payload
    BACKEND=gpu CHECK_TOKENS=200 NEW_TOKENS=64 SWEEP=64
    SMALL=110M BIG=dim=3072,hidden=8192,layers=28,heads=24,kv_heads=8,vocab=32000,seq=2048
    SMALL_BATCHES=1,8,32 BIG_BATCHES=1,8,32,64 GEN=128 PROMPT=64 PREFILL=512 REPEATS=2 REPEATS_MAIN=3
    QUANT_DTYPES=${QUANT_DTYPES-q4_k}
fi
M=$P/models
# the CPU references beside the GPU are the Java kernels (float activations, as on the GPU)
JAVA=("$P/jdk/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xss4m -Dpagewarden.kernels=vector)
JAR=(-jar "$P/pagewarden-engine.jar")

W=$(mktemp -d /tmp/pw-device.XXXX)
# the stages and their budgets (seconds): they add up to the run's total; a 0 budget runs on time left over
plan=(payload=15 gpu-info=5 gpu-check=70 sanitizer=0)
NEWPROPS="gemm matvec1 fusedRope graphs attentionRows"
if [ "${NEW:-1}" = 1 ]; then
    plan+=(gpu-check-gemm=60 gpu-check-matvec1=20 gpu-check-fusedRope=20 gpu-check-graphs=20 gpu-check-attentionRows=15)
fi
plan+=(make-small=10 bench-small=20 bench-small-cpu=0 make-big=35 bench-big=35)
if [ "${NEW:-1}" = 1 ]; then
    plan+=(bench-big-gemm=35 bench-big-prefill=15 bench-big-gemm-prefill=15 bench-big-matvec1=15 bench-big-kernels=15)
fi
plan+=(bench-big-jcuda-launch=0 bench-big-safety=0)
for dt in $QUANT_DTYPES; do plan+=(make-$dt=35 bench-$dt-gemm=25); done
stage_plan "${plan[@]}"
echo "run-device-check.sh ($MODE): ${#plan[@]} stages, budget $STAGE_TOTAL s in all (budgets at ${BUDGET_PCT:-100}%), backend $BACKEND" >&2
finish() {
    python3 cuda-kernels/device/summary.py device "$W" mode=$MODE backend=$BACKEND budget_s=$STAGE_TOTAL >&2
    pack_out "$OUT" summary.json summary.txt gpu-check.json
}
trap finish EXIT

# the payload: parts that came with this checkout are moved to the store under /tmp, then the store's
# parts are checked against their SHA-256 and unpacked once
t0=$SECONDS
receive_parts "$ARRIVED/payload" "$STORE" 2> "$W/payload.err"
if ! unpack_parts "$STORE" engine "$P" 2>> "$W/payload.err"; then
    stage_done payload failed "$(tail -1 "$W/payload.err")" $t0
    cat "$W/payload.err" >&2
    exit 2
fi
stage_done payload ok "" $t0
"${JAVA[@]}" -version 2>&1 | head -1

if command -v nvidia-smi >/dev/null 2>&1; then
    run_stage gpu-info "$W/gpu.txt" nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
else
    stage_skip gpu-info "nvidia-smi not found"
fi

if [ $MODE = dry ]; then
    # the engine's own probe decides, exactly as the real run would
    run_stage gpu-check "$W/gpu-check.json" "${JAVA[@]}" "${JAR[@]}" gpu-check --backend $BACKEND --model $M/stories260K.bin \
        --tokenizer $M/tok512.bin --tokens 1
    rc=$?
    [ $rc = 3 ] && echo "run-device-check.sh: dry run: no usable GPU here: $(cat "$W/gpu-check.json")" >&2
    exit $rc
fi

run_stage gpu-check --expect "$W/gpu-check.json" - "${JAVA[@]}" "${JAR[@]}" gpu-check --backend $BACKEND \
    --model $M/stories260K.bin --tokenizer $M/tok512.bin --tokens $CHECK_TOKENS --out "$W/gpu-check.json"
rc=$?
grep -E '^gpu-check: .*(FAIL|PASS)' "$W/gpu-check.err" >&2
if [ $rc = 3 ]; then
    echo "run-device-check.sh: no usable GPU here: $(cat "$W/gpu-check.json")" >&2
    for s in "${plan[@]}"; do
        [ -z "$(stage_status "${s%%=*}")" ] && stage_skip "${s%%=*}" "no usable GPU here (gpu-check exit 3)"
    done
    exit 3
fi
if [ $rc = 0 ]; then
    stage_skip sanitizer "gpu-check passed"
elif ! command -v compute-sanitizer >/dev/null 2>&1; then
    stage_skip sanitizer "compute-sanitizer not found"
else
    # a failed check: let the memory checker name a bad access, if there is one (on time left over)
    run_stage sanitizer - compute-sanitizer --tool memcheck --print-limit 10 "${JAVA[@]}" "${JAR[@]}" gpu-check \
        --backend $BACKEND --model $M/stories260K.bin --tokenizer $M/tok512.bin --tokens 8 --out "$W/sanitizer-check.json"
fi

# the kernels still off by default, each alone: parity, greedy tokens, batch and decode-step invariance
for prop in $NEWPROPS; do
    [ "${NEW:-1}" = 1 ] || break
    run_stage gpu-check-$prop --expect "$W/gpu-check-$prop.json" - "${JAVA[@]}" -Dpagewarden.gpu.$prop=true "${JAR[@]}" \
        gpu-check --backend $BACKEND --model $M/stories260K.bin --tokenizer $M/tok512.bin --tokens $NEW_TOKENS --sweep $SWEEP \
        --out "$W/gpu-check-$prop.json"
    grep -E '^gpu-check: .*(FAIL|PASS)' "$W/gpu-check-$prop.err" >&2
done

# bench NAME MODEL_STAGE [JVM options] bench options...: one bench on a model the stage MODEL_STAGE wrote
bench() {
    local name=$1 needs=$2
    shift 2
    local opts=()
    while [ $# -gt 0 ] && [ "${1#-D}" != "$1" ]; do opts+=("$1"); shift; done
    if [ "$(stage_status "$needs")" != ok ]; then
        stage_skip "$name" "$needs did not write the model"
        return
    fi
    run_stage "$name" --expect "$W/$name.json" "$W/$name.json" "${JAVA[@]}" -Dpagewarden.gpu.timing=true "${opts[@]}" \
        "${JAR[@]}" bench "$@" --json
    grep gpu-timing "$W/$name.err" | head -6 >&2
}

small=/tmp/pagewarden-bench-small.gguf
run_stage make-small --expect $small - "${JAVA[@]}" "${JAR[@]}" make-model --shape "$SMALL" --dtype f16 --format gguf \
    --out $small --seed 1
bench bench-small make-small --model $small --backend $BACKEND --batch $SMALL_BATCHES --gen-tokens $GEN --prompt-tokens $PROMPT \
    --repeats $REPEATS_MAIN
if [ "${CPU_BENCH:-0}" = 1 ]; then
    bench bench-small-cpu make-small --model $small --backend cpu --batch 1 --gen-tokens $GEN --prompt-tokens $PROMPT \
        --repeats $REPEATS_MAIN
else
    stage_skip bench-small-cpu "CPU_BENCH=0"
fi
rm -f $small

big=/tmp/pagewarden-bench-big.gguf
run_stage make-big --expect $big - "${JAVA[@]}" "${JAR[@]}" make-model --shape "$BIG" --dtype f16 --format gguf --out $big --seed 1
bench bench-big make-big --model $big --backend $BACKEND --batch $BIG_BATCHES --gen-tokens $GEN --prompt-tokens $PROMPT \
    --repeats $REPEATS_MAIN
if [ "${NEW:-1}" = 1 ]; then
    bench bench-big-gemm make-big -Dpagewarden.gpu.gemm=true --model $big --backend $BACKEND --batch $BIG_BATCHES \
        --gen-tokens $GEN --prompt-tokens $PROMPT --repeats $REPEATS_MAIN
    # the prefill figure: one long prompt, as it is and with the GEMM kernels
    bench bench-big-prefill make-big --model $big --backend $BACKEND --batch 1 --gen-tokens 16 --prompt-tokens $PREFILL \
        --repeats $REPEATS
    bench bench-big-gemm-prefill make-big -Dpagewarden.gpu.gemm=true --model $big --backend $BACKEND --batch 1 --gen-tokens 16 \
        --prompt-tokens $PREFILL --repeats $REPEATS
    bench bench-big-matvec1 make-big -Dpagewarden.gpu.matvec1=true --model $big --backend $BACKEND --batch 1,8 --gen-tokens $GEN \
        --prompt-tokens $PROMPT --repeats $REPEATS
    # the per-kernel table (CUDA events around every kernel; graphs off) of decode steps at batch 1 and 32 and of
    # prefill steps, on the tensor-core path with prefill attention by row groups
    bench bench-big-kernels make-big -Dpagewarden.gpu.kernelTiming=true -Dpagewarden.gpu.gemm=true \
        -Dpagewarden.gpu.attentionRows=true --model $big --backend $BACKEND --batch 1,32 --gen-tokens 16 \
        --prompt-tokens $PREFILL --repeats 1
fi
if [ "${EXTRAS:-0}" = 1 ]; then
    # JCuda's own launch path (what the FFM launcher saves), and the in-kernel tag checks' cost
    bench bench-big-jcuda-launch make-big -Dpagewarden.gpu.launch=jcuda --model $big --backend $BACKEND --batch 1 \
        --gen-tokens $GEN --prompt-tokens $PROMPT --repeats $REPEATS
    bench bench-big-safety make-big --model $big --backend $BACKEND --batch 1 --gen-tokens $GEN --prompt-tokens $PROMPT \
        --repeats 1 --compare safety --pairs 6
else
    stage_skip bench-big-jcuda-launch "EXTRAS=0"
    stage_skip bench-big-safety "EXTRAS=0"
fi
rm -f $big

# quantized copies of the large shape (read at their stored size), with the GEMM kernels; a dtype the GPU
# backend cannot run yet fails with its reason
for dt in $QUANT_DTYPES; do
    model=/tmp/pagewarden-bench-$dt.gguf
    run_stage make-$dt --expect $model - "${JAVA[@]}" "${JAR[@]}" make-model --shape "$BIG" --dtype $dt --format gguf \
        --out $model --seed 1
    bench bench-$dt-gemm make-$dt -Dpagewarden.gpu.gemm=true --model $model --backend $BACKEND --batch $SMALL_BATCHES \
        --gen-tokens $GEN --prompt-tokens $PROMPT --repeats $REPEATS
    rm -f $model
done

failed=$(awk -F'\t' '$2 == "failed" {print $1}' "$W/stages.tsv" | tr '\n' ' ')
[ -z "$failed" ] || { echo "run-device-check.sh: failed: $failed" >&2; exit 1; }
exit 0
