#!/usr/bin/env bash
# Side by side decode speed, batch 1: llama.cpp (bench.mjs) and the engine (`bench --batch 1 --json`)
# on the same GGUF file with the same thread count, alternating, one of each per round.
#
#   compare.sh MODEL.gguf [ROUNDS=5] [THREADS=2]
#
# The engine command comes from $J (a full command such as
# "java --add-modules jdk.incubator.vector -jar inference-core/cli/target/pagewarden-engine.jar", or just the
# path of the jar); by default the jar at inference-core/cli/target/pagewarden-engine.jar of this repository,
# run by $JAVA_HOME/bin/java when JAVA_HOME is set. PROMPT_TOKENS (128), GEN_TOKENS (64) and
# REPEATS (3) apply to both programs. Each program's JSON line is appended to $RAW (default: a new
# file under /tmp, named at the end), their progress output to $RAW.stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../../.." && pwd)"

if [[ $# -lt 1 || $# -gt 3 || "$1" == "-h" || "$1" == "--help" ]]; then
    echo "usage: $0 MODEL.gguf [ROUNDS=5] [THREADS=2]" >&2
    exit 2
fi
model="$1"
rounds="${2:-5}"
threads="${3:-2}"
prompt="${PROMPT_TOKENS:-128}"
gen="${GEN_TOKENS:-64}"
repeats="${REPEATS:-3}"
[[ -f "$model" ]] || { echo "no such model file: $model" >&2; exit 2; }
[[ -d "$here/node_modules/node-llama-cpp" ]] || { echo "run 'npm install' in $here first" >&2; exit 2; }

java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
if [[ -z "${J:-}" ]]; then
    J="$java --add-modules jdk.incubator.vector -jar $root/inference-core/cli/target/pagewarden-engine.jar"
elif [[ "$J" != *" "* && "$J" == *.jar ]]; then
    J="$java --add-modules jdk.incubator.vector -jar $J"
fi
raw="${RAW:-$(mktemp /tmp/llama-cpp-compare.XXXXXX.jsonl)}"
log="$raw.stderr"

# runs a program, its stderr to $log; on failure shows the end of it and stops
run() {
    if ! "$@" 2>>"$log"; then
        echo "failed: $*" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
}

# field NAME of a JSON line on stdin ("a.b" for nested keys)
field() {
    node -e '
        let s = ""; process.stdin.on("data", (d) => s += d).on("end", () => {
            const line = s.trim().split("\n").filter((l) => l.startsWith("{")).pop();
            let v = JSON.parse(line);
            for (const k of process.argv[1].split(".")) v = v[k];
            console.log(v);
        });' "$1"
}

echo "model $model, $threads threads, prompt $prompt, gen $gen, $repeats repeats per program per round, $rounds rounds"
printf '%-6s %20s %20s %16s\n' round "llama.cpp decode/s" "engine decode/s" "engine/llama.cpp"
ratios=()
for ((r = 1; r <= rounds; r++)); do
    lc="$(run node "$here/bench.mjs" --model "$model" --threads "$threads" --prompt-tokens "$prompt" \
        --gen-tokens "$gen" --repeats "$repeats")"
    echo "$lc" >> "$raw"
    if [[ $r -eq 1 ]]; then
        build="llama.cpp $(field version <<< "$lc") ($(field build <<< "$lc")) via node-llama-cpp $(field node_llama_cpp <<< "$lc"), $(field threads_used <<< "$lc") threads used"
    fi
    # shellcheck disable=SC2086
    en="$(run $J bench --model "$model" --batch 1 --threads "$threads" --prompt-tokens "$prompt" \
        --gen-tokens "$gen" --repeats "$repeats" --json)"
    echo "$en" | grep '^{' >> "$raw"
    a="$(field decode_tok_s_median <<< "$lc")"
    b="$(field decode_tok_s.1 <<< "$en")"
    ratio="$(node -e 'console.log((Number(process.argv[2]) / Number(process.argv[1])).toFixed(3))' "$a" "$b")"
    ratios+=("$ratio")
    printf '%-6s %20.2f %20.2f %15sx\n' "$r" "$a" "$b" "$ratio"
done
node -e '
    const x = process.argv.slice(1).map(Number).sort((p, q) => p - q);
    const m = x.length % 2 ? x[(x.length - 1) / 2] : (x[x.length / 2 - 1] + x[x.length / 2]) / 2;
    console.log(`engine/llama.cpp decode, batch 1: median ${m.toFixed(3)}x, range ${x[0].toFixed(3)}-${x[x.length - 1].toFixed(3)}x over ${x.length} rounds`);
' "${ratios[@]}"
echo "$build"
echo "raw JSON lines: $raw (progress and logs: $log)"
