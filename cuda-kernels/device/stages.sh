# Shared by the device scripts (sourced, not run): a run is a list of stages, each with a budget in
# seconds; the budgets add up to the run's total. A stage's deadline is the sum of its own budget and
# those before it, so time a stage leaves unused goes to the ones after it, and a stage can never take
# time from a later one. Every outcome (ok, failed, skipped, with its reason, seconds and command
# line) is recorded in $W/stages.tsv for summary.json. Needs W (the run's work folder).

declare -gA STAGE_END=()
STAGE_TOTAL=0

# stage_plan NAME=SECONDS...: the run's stages in order; STAGE_TOTAL is their sum. BUDGET_PCT (default 100)
# scales every budget: a rehearsal on a busy CPU machine takes longer than the GPU machine.
stage_plan() {
    local kv t0=$SECONDS
    STAGE_TOTAL=0
    for kv in "$@"; do
        STAGE_TOTAL=$((STAGE_TOTAL + ${kv#*=} * ${BUDGET_PCT:-100} / 100))
        STAGE_END[${kv%%=*}]=$((t0 + STAGE_TOTAL))
    done
    : > "$W/stages.tsv"
}

# stage_left NAME: seconds until the stage's deadline (0 when spent); fails for a stage not in the plan.
stage_left() {
    local end=${STAGE_END[$1]:-}
    [ -n "$end" ] || { echo "stages: $1 has no budget in the plan" >&2; return 1; }
    local l=$((end - SECONDS))
    echo $((l > 0 ? l : 0))
}

# stage_done NAME STATUS REASON STARTED_AT [COMMAND]: records an outcome (tabs and newlines flattened).
stage_done() {
    local reason cmd
    reason=$(printf '%s' "$3" | tr '\t\n' '  ' | cut -c1-400)
    # the run's own secrets (API key, scrape token) stay out of the summary
    cmd=$(printf '%s' "${5:-}" | tr '\t\n' '  ' | sed -E 's/(--key|--metrics-token) [^ ]+/\1 ***/g')
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" $((SECONDS - $4)) "$reason" "$cmd" >> "$W/stages.tsv"
    echo "stage $1: $2${3:+ ($3)} [$((SECONDS - $4)) s]" >&2
}

stage_skip() {
    stage_done "$1" skipped "$2" $SECONDS
}

# stage_status NAME: ok, failed, skipped, or nothing when it has not run.
stage_status() {
    awk -F'\t' -v n="$1" '$1 == n {s = $2} END {print s}' "$W/stages.tsv"
}

# last_words FILE: the last non-empty line of a log that is not a progress or timing line (for a reason).
last_words() {
    grep -v -e '^gpu-timing' -e '^\s*$' -e '%' "$1" 2>/dev/null | tail -1 | cut -c1-300
}

# run_stage NAME [--expect FILE] STDOUT COMMAND...: COMMAND (an executable: timeout cannot run a shell
# function) with a timeout at the stage's deadline; stdout to the file STDOUT ("-": $W/NAME.log),
# stderr to $W/NAME.err. ok when it exits 0 (and FILE, if given, exists and is not empty), otherwise
# failed with the exit code, or the timeout, and the last words of its stderr. Returns the exit code
# (124 for a timeout, 125 for a stage with no time left, which is then skipped).
run_stage() {
    local name=$1 expect=
    shift
    if [ "$1" = --expect ]; then expect=$2; shift 2; fi
    local out=$1
    shift
    [ "$out" = - ] && out=$W/$name.log
    local t t0=$SECONDS rc
    t=$(stage_left "$name") || { stage_done "$name" failed "no budget for it in the plan" $t0 "$*"; return 1; }
    if [ "$t" -lt 1 ]; then
        stage_done "$name" skipped "the run's budget was spent before it" $t0 "$*"
        return 125
    fi
    echo "== $name (at most $t s): $*" >&2
    timeout -k 10 "$t" "$@" > "$out" 2> "$W/$name.err"
    rc=$?
    if [ $rc = 0 ] && [ -n "$expect" ] && [ ! -s "$expect" ]; then
        stage_done "$name" failed "exit 0 but $expect was not written" $t0 "$*"
        return 1
    fi
    case $rc in
        0) stage_done "$name" ok "" $t0 "$*" ;;
        124|137) stage_done "$name" failed "timed out at its deadline ($t s); last: $(last_words "$W/$name.err")" $t0 "$*" ;;
        *) stage_done "$name" failed "exit $rc: $(last_words "$W/$name.err")" $t0 "$*" ;;
    esac
    return $rc
}

# pack_out OUT FILE...: the named files of $W into OUT as they are, everything of $W in OUT/results.tgz (so
# OUT holds at most the named files plus one archive); then $W is removed.
pack_out() {
    local out=$1 f
    shift
    for f in "$@"; do
        [ -f "$W/$f" ] && cp -f "$W/$f" "$out/"
    done
    tar -czf "$out/results.tgz" -C "$W" . 2>/dev/null
    rm -rf "$W"
}

# device_run_mode ARG: the run's MODE from its one argument - real (none), dry (--dry-run) or rehearse
# (--rehearse), anything else a usage error (exit 2) - and its OUT folder ($OUT, or ./device-out), made.
device_run_mode() {
    MODE=real
    case "$1" in
        --dry-run) MODE=dry ;;
        --rehearse) MODE=rehearse ;;
        "") ;;
        *) echo "usage: $0 [--dry-run|--rehearse]" >&2; exit 2 ;;
    esac
    OUT=${OUT:-$PWD/device-out}
    mkdir -p "$OUT"
}
