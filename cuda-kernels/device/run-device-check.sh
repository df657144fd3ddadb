#!/usr/bin/env bash
# The GPU device check, in one call, on a bare machine with an NVIDIA GPU (see cuda-kernels/README.md):
#   1. gpu-check: GPU vs CPU logits (real model; random F32/F16/Q8_0 models with GQA), greedy tokens,
#      batch invariance, in-kernel tag/written-slot refusals, the writer shadow, device CRC32C vs the
#      frame checksum, scrub, device-to-device copy bandwidth; then the same check with each kernel
#      that is still off by default switched on (matvec1, gemm, fusedRope, graphs);
#   2. bench --backend gpu on generated models: 110M F16 at batch 1, 8, 32 (and the CPU at batch 1 for
#      scale); 2.9B F16 (Llama-3.2-3B shape) at batch 1, 8, 32, 64, as it is and with the GEMM kernels
#      (with a 512-token prefill figure), and with the batch-1 matvec kernels; quantized copies of the
#      2.9B shape (QUANT_DTYPES) with the GEMM kernels;
#   3. a summary: decode tok/s and weight bandwidth (the bytes as stored, quantized for quantized models)
#      vs the measured copy bandwidth and the H200 HBM roofline, prefill tok/s.
# Results go to $OUT (or ./device-out): summary.txt, gpu-check.json, results.tgz (everything).
# Exit 3 when there is no usable GPU (nothing else is run). Env: BUDGET_S (380), CPU_BENCH=0, NEW=0 (skip
# the kernels still off by default), EXTRAS=1 (also JCuda's launch path and safety checks on/off),
# QUANT_DTYPES ("q4_k q8_0"; also q6_k, bf16, ...; empty: none), SHAPES.
# --dry-run: checks the payload and the GPU, runs nothing on it.
set -uo pipefail
cd "$(dirname "$0")/../.."
. cuda-kernels/device/payload-lib.sh
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
HBM_BYTES_PER_S=4.8e12   # H200 HBM3e, the vendor figure
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1

# the payload's parts, checked against their SHA-256 and unpacked once (the platform check reuses them)
P=/tmp/pw-payload
unpack_parts cuda-kernels/device/payload engine $P \
    || { echo "run-device-check.sh: no usable payload; run cuda-kernels/device/build-payload.sh first" >&2; exit 2; }
JAVA="$P/jdk/bin/java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xss4m -jar $P/pagewarden-engine.jar"
# java with extra JVM options before the launcher's: jv -Dx=y ... bench ...
jv() { local opts=(); while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do opts+=("$1"); shift; done; $P/jdk/bin/java "${opts[@]}" ${JAVA#$P/jdk/bin/java} "$@"; }
$P/jdk/bin/java -version 2>&1 | head -1
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
else
    echo "run-device-check.sh: nvidia-smi not found" | tee "$OUT/gpu.txt"
fi
if [ "$DRY" = 1 ]; then
    # the engine's own probe decides, exactly as the real run would
    $JAVA gpu-check --model $P/models/stories260K.bin --tokenizer $P/models/tok512.bin --out "$OUT/gpu-check.json" --tokens 1 \
        >/dev/null 2>"$OUT/gpu-check.err" &
    pid=$!
    wait $pid; rc=$?
    cat "$OUT/gpu-check.err" >&2
    if [ $rc = 3 ]; then
        echo "run-device-check.sh: dry run: no usable GPU here ($(cat "$OUT/gpu-check.json")); the real run would stop here with exit 3" >&2
        exit 3
    fi
    echo "run-device-check.sh: dry run: payload and GPU ok (gpu-check exit $rc)"
    exit 0
fi

set -o pipefail
# Everything lands in $W and is packed into one archive (a handful of files is easy to copy back); the
# summary and the gpu-check JSON also go back as they are. The trap packs whatever exists, even after a failure.
W=$(mktemp -d /tmp/pw-device.XXXX)
FINAL_OUT=$OUT
OUT=$W
pack() {
    cp -f "$W/summary.txt" "$W/gpu-check.json" "$FINAL_OUT/" 2>/dev/null
    tar -czf "$FINAL_OUT/results.tgz" -C "$W" . 2>/dev/null
}
trap pack EXIT
# every stage's timeout is cut to what is left of the budget, so the archive is always packed in time
DEADLINE=$((SECONDS + ${BUDGET_S:-380}))
limit() { local l=$((DEADLINE - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
cp "$FINAL_OUT/gpu.txt" "$W/" 2>/dev/null
echo "== gpu-check"
timeout $(limit 180) $JAVA gpu-check --model $P/models/stories260K.bin --tokenizer $P/models/tok512.bin --out "$OUT/gpu-check.json" 2>&1 \
    | tee "$OUT/gpu-check.log"
rc=${PIPESTATUS[0]}
if [ $rc = 3 ]; then
    echo "run-device-check.sh: no usable GPU here: $(cat "$OUT/gpu-check.json")" >&2
    exit 3
fi
if [ $rc != 0 ] && command -v compute-sanitizer >/dev/null 2>&1; then
    # a failed check on the real model: let the memory checker name a bad access, if there is one
    echo "== compute-sanitizer memcheck (gpu-check failed with $rc)"
    timeout $(limit 60) compute-sanitizer --tool memcheck --print-limit 10 $JAVA gpu-check --model $P/models/stories260K.bin \
        --tokenizer $P/models/tok512.bin --tokens 8 --out "$OUT/sanitizer-check.json" > "$OUT/sanitizer.log" 2>&1
    grep -E '^=========|gpu-check:' "$OUT/sanitizer.log" | head -40
fi

M=$P/models
if [ "${NEW:-1}" = 1 ]; then
    # the kernels still off by default, each alone: parity, greedy tokens, batch and decode-step invariance
    # (matvec1: a step alone runs it, the same step in a batch the tiled kernels: bit-identical logits)
    for prop in matvec1 gemm fusedRope graphs; do
        echo "== gpu-check with -Dpagewarden.gpu.$prop=true"
        timeout $(limit 90) jv -Dpagewarden.gpu.$prop=true gpu-check --model $M/stories260K.bin --tokenizer $M/tok512.bin \
            --tokens 64 --out "$OUT/gpu-check-$prop.json" > "$OUT/gpu-check-$prop.log" 2>&1
        echo "gpu-check $prop: exit $?"
        grep -E 'gpu-check: .*(FAIL|threw)' "$OUT/gpu-check-$prop.log" | head -5
    done
fi

echo "== bench"
# 110M: the CPU figure beside it for scale; ~3B (a Llama-3.2-3B-like shape, 32000 vocab): GPU only
BIG=dim=3072,hidden=8192,layers=28,heads=24,kv_heads=8,vocab=32000,seq=2048
shapes="110M $BIG"
[ -n "${SHAPES:-}" ] && shapes=$SHAPES
last=$(echo $shapes | wc -w)
# bench NAME [JVM options] bench-options...: one bench, its JSON and stderr in $OUT, step timing printed
bench() {
    local name=$1 t=$2; shift 2
    local opts=(); while [ $# -gt 0 ] && [ "${1#-D}" != "$1" ]; do opts+=("$1"); shift; done
    timeout $(limit $t) jv -Dpagewarden.gpu.timing=true "${opts[@]}" bench "$@" --json \
        > "$OUT/bench-$name.json" 2> "$OUT/bench-$name.err" || echo "bench $name failed: $(tail -3 "$OUT/bench-$name.err")"
    grep gpu-timing "$OUT/bench-$name.err" | head -6
}
i=0
for shape in $shapes; do
    i=$((i + 1))
    model=/tmp/pagewarden-bench-$i.gguf
    timeout $(limit 60) $JAVA make-model --shape "$shape" --dtype f16 --format gguf --out $model --seed 1 2>&1 | tail -1
    if [ $i -lt $last ]; then
        bench $i-gpu 90 --model $model --backend gpu --batch 1,8,32 --gen-tokens 128 --prompt-tokens 64
        [ "${CPU_BENCH:-1}" = 1 ] && bench $i-cpu 60 --model $model --backend cpu --batch 1 --gen-tokens 128 --prompt-tokens 64
        rm -f $model; continue
    fi
    # the largest model: as it is, then each new kernel path
    bench $i-gpu 120 --model $model --backend gpu --batch 1,8,32,64 --gen-tokens 128 --prompt-tokens 64
    if [ "${NEW:-1}" = 1 ]; then
        bench $i-gpu-gemm 120 -Dpagewarden.gpu.gemm=true --model $model --backend gpu --batch 1,8,32,64 --gen-tokens 128 --prompt-tokens 64
        # the prefill figure: one 512-token prompt, as it is and with the GEMM kernels
        bench $i-gpu-prefill512 60 --model $model --backend gpu --batch 1 --gen-tokens 16 --prompt-tokens 512 --repeats 2
        bench $i-gpu-gemm-prefill512 60 -Dpagewarden.gpu.gemm=true --model $model --backend gpu --batch 1 --gen-tokens 16 \
            --prompt-tokens 512 --repeats 2
        bench $i-gpu-matvec1 60 -Dpagewarden.gpu.matvec1=true --model $model --backend gpu --batch 1,8 --gen-tokens 128 --prompt-tokens 64 --repeats 2
    fi
    if [ "${EXTRAS:-0}" = 1 ]; then
        # JCuda's own launch path (what the FFM launcher saves), and the in-kernel tag checks' cost
        bench $i-gpu-jcuda-launch 60 -Dpagewarden.gpu.launch=jcuda --model $model --backend gpu --batch 1 --gen-tokens 64 --prompt-tokens 64 --repeats 2
        timeout $(limit 90) $JAVA bench --model $model --backend gpu --batch 1 --gen-tokens 64 --prompt-tokens 64 --repeats 1 \
            --compare safety --pairs 6 --json > "$OUT/bench-$i-gpu-safety.json" 2> "$OUT/bench-$i-gpu-safety.err" \
            || echo "bench compare safety failed: $(tail -3 "$OUT/bench-$i-gpu-safety.err")"
    fi
    rm -f $model
done
if [ "${NEW:-1}" = 1 ]; then
    # quantized copies of the largest shape (read at their stored size), with the GEMM kernels; a dtype the
    # GPU backend cannot run yet fails with its reason in bench-q*.err
    for dt in ${QUANT_DTYPES-q4_k q8_0}; do
        [ $((DEADLINE - SECONDS)) -lt 40 ] && { echo "quantized $dt: skipped, budget spent"; continue; }
        model=/tmp/pagewarden-bench-$dt.gguf
        timeout $(limit 90) $JAVA make-model --shape "${shape}" --dtype $dt --format gguf --out $model --seed 1 2>&1 | tail -1
        bench $dt-gpu-gemm 75 -Dpagewarden.gpu.gemm=true --model $model --backend gpu --batch 1,8,32 --gen-tokens 64 --prompt-tokens 64 --repeats 2
        rm -f $model
    done
fi

echo "== summary"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$OUT" "$HBM_BYTES_PER_S" <<'PY' | tee "$OUT/summary.txt"
import json, sys, glob, os
out, hbm = sys.argv[1], float(sys.argv[2])
check = json.load(open(os.path.join(out, "gpu-check.json")))
copy = check.get("copy_bandwidth_bytes_per_s") or 0
def check_line(name, c):
    print("%s pass=%s parity real=%.3g f32=%.3g f16=%.3g q8_0=%.3g greedy equal=%s (%s identical) invariance=%s decode=%s" % (
        name, c.get("pass"), c.get("parity_real_model_max_rel_error", -1), c.get("parity_random_f32_max_rel_error", -1),
        c.get("parity_random_f16_max_rel_error", -1), c.get("parity_random_q8_0_max_rel_error", -1),
        c.get("greedy_tokens_equal"), c.get("greedy_identical_prefix"), c.get("batch_invariance_max_abs_diff"),
        c.get("decode_invariance_max_abs_diff")))
check_line("gpu-check", check)
for f in sorted(glob.glob(os.path.join(out, "gpu-check-*.json"))):
    try:
        check_line("gpu-check " + os.path.basename(f)[len("gpu-check-"):-len(".json")], json.load(open(f)))
    except Exception as e:
        print(f, "unreadable:", e)
print("tags: stale=%s unwritten=%s scrubbed=%s; checksum mismatches=%s corruption detected=%s scrub zeroes=%s" % (
    check.get("tag_stale_epoch"), check.get("tag_unwritten_slot"), check.get("tag_scrubbed_read"),
    check.get("checksum_mismatches"), check.get("checksum_corruption_detected"), check.get("scrub_zeroes")))
print("writer shadow: slots written=%s wrong=%s scrub zeroes=%s neighbour kept=%s" % (
    check.get("shadow_slots_written"), check.get("shadow_wrong_slots"), check.get("shadow_scrub_zeroes"),
    check.get("shadow_neighbour_kept")))
print("copy bandwidth (read+write) %.0f GB/s; HBM roofline %.0f GB/s" % (copy / 1e9, hbm / 1e9))
print("%-10s %-22s %6s %12s %14s %10s %10s" % ("model", "run", "batch", "decode tok/s", "weights GB/s", "% copy", "% HBM"))
for f in sorted(glob.glob(os.path.join(out, "bench-*.json"))):
    try:
        b = json.load(open(f))
    except Exception as e:
        print(f, "unreadable:", e); continue
    wb = b.get("weight_bytes_per_token", 0)
    dec = b.get("decode_tok_s", {})
    items = dec.items() if isinstance(dec, dict) else [(str(x.get("batch")), x.get("tok_s")) for x in dec]
    run = os.path.basename(f)[len("bench-"):-len(".json")]
    for batch, toks in items:
        if toks is None:
            print("%-10s %-22s %6s %12s" % (b.get("parameters"), run, batch, "n/a")); continue
        bw = wb * float(toks) / int(batch)   # weights are read once per step of `batch` tokens
        print("%-10s %-22s %6s %12.1f %14.1f %9.1f%% %9.1f%%" % (b.get("parameters"), run, batch, float(toks),
              bw / 1e9, 100 * bw / copy if copy else 0, 100 * bw / hbm))
    print("%-10s %-22s prefill tok/s %s (%s prompt tokens)" % (b.get("parameters"), run, b.get("prefill_tok_s"),
          b.get("prompt_tokens")))
    cs = b.get("compare_safety")
    if cs:
        print("%-10s %-22s checks on/off: median ratio %.4f (min %.4f, max %.4f, %d pairs)" % (b.get("parameters"), run,
              cs.get("median_ratio", 0), cs.get("min_ratio", 0), cs.get("max_ratio", 0), cs.get("pairs", 0)))
PY
else
    echo "python3 not found: see $OUT/*.json"
fi
exit $rc
