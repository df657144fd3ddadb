#!/usr/bin/env bash
# Per-kernel profile of one decode step of a ~3B F16 model on the GPU machine (Nsight Compute, clocks left alone):
# time, DRAM bytes and throughput, occupancy of 30 consecutive kernels of a batch-1 decode step. Needs the payload
# (device/build-payload.sh) and ncu there; writes ncu.csv, bench.json, bench.err to $OUT and prints one line per kernel.
# PW_JAVA_OPTS: extra JVM options (for example -Dpagewarden.gpu.matvec1=true to profile the batch-1 kernels).
cd "$(dirname "$0")/../.."; OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT"
. cuda-kernels/device/payload-lib.sh; P=/tmp/pw-payload; receive_parts cuda-kernels/device/payload /tmp/pw-parts; unpack_parts /tmp/pw-parts engine $P || exit 2; J="$P/jdk/bin/java ${PW_JAVA_OPTS:-} --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xss4m -jar $P/pagewarden-engine.jar"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
$J make-model --shape dim=3072,hidden=8192,layers=28,heads=24,kv_heads=8,vocab=32000,seq=2048 --dtype f16 --format gguf --out /tmp/m.gguf --seed 1 2>&1 | tail -1
timeout 200 $NCU --clock-control none --target-processes all --kernel-name regex:pw_ --launch-skip 1500 --launch-count 30 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread,launch__occupancy_limit_registers \
  --csv --log-file $OUT/ncu.csv $J bench --model /tmp/m.gguf --backend gpu --batch 1 --gen-tokens 16 --prompt-tokens 8 --repeats 1 --json > $OUT/bench.json 2> $OUT/bench.err
echo "rc=$?"; tail -3 $OUT/bench.err
python3 - $OUT/ncu.csv <<'PY'
import csv,sys
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
h=rows[0]; ki=h.index("Kernel Name"); mi=h.index("Metric Name"); vi=h.index("Metric Value"); ii=h.index("ID")
by={}
for r in rows[1:]:
    by.setdefault((int(r[ii]),r[ki]),{})[r[mi]]=r[vi]
for (i,k),m in sorted(by.items()):
    print(i,k[:22],*("%s=%s"%(n.split("__")[1][:18],v) for n,v in sorted(m.items())))
PY
