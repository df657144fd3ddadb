#!/usr/bin/env bash
# The platform serving from the GPU, on a bare GPU machine (see cuda-kernels/README.md, "The platform on
# the GPU"): moves the payload parts that came with this run to /tmp/pw-parts and unpacks the engine and
# platform payloads from there (SHA-256 of every part; parts an earlier run on this machine left there
# count), writes a model with the engine's make-model (default: 2.9B F16, a Llama-3.2-3B shape), starts
# the platform jar on embedded defaults (its own PostgreSQL, PAGEWARDEN_HOME under /tmp, free ports) with
# the backend forced, waits for readiness, creates a tenant and an API key through the admin API, runs
# bench-http (CLIENTS streaming clients for DURATION_S, then RECEIPTS of their receipts checked through the
# tenant audit endpoint), reads the KV pool gauges afterwards, stops the
# platform (SIGTERM; a platform that does not stop is killed, and so is its PostgreSQL).
# Every stage has a budget, they add up to the run's total (under 5 minutes). $OUT (or ./device-out) gets
# summary.json (every stage {name, status ok|failed|skipped, reason, seconds, command} and the figures),
# summary.txt, platform-check.json (backend used, TTFT p50/p99, tokens/s, errors, pools free, receipts, pass) and
# results.tgz (the logs).
# Env: BACKEND (gpu; cpu or auto for a run without a GPU), DURATION_S (60), CLIENTS (32), MAX_TOKENS (64),
# SHAPE (the 2.9B shape; e.g. stories260K or 110M), DTYPE (f16), PLATFORM_JAVA_OPTS (extra JVM options, e.g.
# -Dpagewarden.gpu.gemm=true), RUN_AS_NOBODY=1 (as root: run the platform as nobody, as where no user
# namespace can be made).
# Exit 0 clean, 1 a stage failed or the run was not clean, 2 a payload part missing (it says which) or
# differing, 3 no usable GPU.
# --dry-run: checks the payloads and starts the platform on the real model with the GPU backend forced:
# without a GPU it refuses to start, and the script says why and exits 3.
# --rehearse: every stage with the same command lines on a machine without a GPU: the CPU backend, the
# stories260K shape, 12 clients (above a new tenant's default 8 at once) for 5 s, the rehearsal payload (cuda-kernels/device/rehearse.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
. cuda-kernels/device/payload-lib.sh
. cuda-kernels/device/stages.sh
device_run_mode "${1:-}"
# What differs between the real run and its rehearsal: these variables, never the command lines.
if [ $MODE = rehearse ]; then
    R=${REHEARSE_DIR:-/tmp/pw-rehearse}
    ARRIVED=$R/arrive STORE=$R/parts P=$R/payload PLATFORM=$R/platform
    BACKEND=cpu DURATION_S=${DURATION_S:-5} CLIENTS=${CLIENTS:-12} RECEIPTS=${RECEIPTS:-50} MAX_TOKENS=${MAX_TOKENS:-8} SHAPE=stories260K DTYPE=f16
    BUDGET_PCT=${BUDGET_PCT:-400}   # a busy CPU machine, not the GPU one
else
    ARRIVED=cuda-kernels/device STORE=/tmp/pw-parts P=/tmp/pw-payload PLATFORM=/tmp/pw-platform
    BACKEND=${BACKEND:-gpu}
    DURATION_S=${DURATION_S:-60}
    CLIENTS=${CLIENTS:-32} RECEIPTS=${RECEIPTS:-200}
    MAX_TOKENS=${MAX_TOKENS:-64}
    SHAPE=${SHAPE:-dim=3072,hidden=8192,layers=28,heads=24,kv_heads=8,vocab=32000,seq=2048}
    DTYPE=${DTYPE:-f16}
fi
[ $MODE = dry ] && BACKEND=gpu
log() { echo "run-platform-check.sh: $*" >&2; }

W=$(mktemp -d /tmp/pw-platform-check.XXXX)
HOME_DIR=$W/home
PLATFORM_PID=
stage_plan payload=20 make-model=40 start=75 tenant=10 bench-http=$((DURATION_S + 40)) metrics=10 stop=35
log "($MODE) 7 stages, budget $STAGE_TOTAL s in all (budgets at ${BUDGET_PCT:-100}%), backend $BACKEND"

# stop_platform: SIGTERM (the platform stops its embedded PostgreSQL itself), up to the stop stage's
# deadline; then SIGKILL, and the PostgreSQL it started (by the pid in its data folder) killed too.
# Prints what it had to kill; returns 1 when it had to kill anything.
stop_platform() {
    local killed=
    if [ -n "$PLATFORM_PID" ] && kill -0 "$PLATFORM_PID" 2>/dev/null; then
        kill -TERM "$PLATFORM_PID"
        local until=$((SECONDS + $(stage_left stop)))
        while kill -0 "$PLATFORM_PID" 2>/dev/null && [ $SECONDS -lt $until ]; do sleep 1; done
        if kill -0 "$PLATFORM_PID" 2>/dev/null; then
            kill -KILL "$PLATFORM_PID"
            killed="the platform (pid $PLATFORM_PID, still running after SIGTERM)"
        fi
        wait "$PLATFORM_PID" 2>/dev/null
    fi
    local pidfile pg
    for pidfile in $(find "$HOME_DIR" -name postmaster.pid 2>/dev/null); do
        pg=$(head -1 "$pidfile")
        if [ -n "$pg" ] && kill -0 "$pg" 2>/dev/null; then
            kill -TERM "$pg"
            for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pg" 2>/dev/null || break; sleep 1; done
            kill -0 "$pg" 2>/dev/null && kill -KILL "$pg"
            killed="${killed:+$killed; }its PostgreSQL (pid $pg, left running)"
        fi
    done
    [ -z "$killed" ] || { echo "$killed"; return 1; }
}
finish() {
    if [ -z "$PLATFORM_PID" ]; then
        [ -n "$(stage_status stop)" ] || stage_skip stop "no platform was started"
    elif [ -z "$(stage_status stop)" ]; then
        t0=$SECONDS
        if why=$(stop_platform); then stage_done stop ok "" $t0; else stage_done stop failed "killed $why" $t0; fi
    fi
    for s in payload make-model start tenant bench-http metrics; do
        [ -n "$(stage_status $s)" ] || stage_skip $s "not reached: ${STOPPED_BY:-an earlier stage failed}"
    done
    [ $MODE = dry ] || rm -f "$W/model.gguf"
    rm -rf "$HOME_DIR"   # the database of this run only
    python3 cuda-kernels/device/summary.py platform "$W" mode=$MODE backend=$BACKEND budget_s=$STAGE_TOTAL >&2
    pack_out "$OUT" summary.json summary.txt platform-check.json
}
trap finish EXIT

# the payloads: parts that came with this checkout go to the store under /tmp first
t0=$SECONDS
receive_parts "$ARRIVED/payload" "$STORE" 2> "$W/payload.err"
receive_parts "$ARRIVED/platform-payload" "$STORE" 2>> "$W/payload.err"
if ! { unpack_parts "$STORE" engine "$P" && unpack_parts "$STORE" platform "$PLATFORM"; } 2>> "$W/payload.err"; then
    stage_done payload failed "$(tail -1 "$W/payload.err")" $t0
    cat "$W/payload.err" >&2
    STOPPED_BY="no usable payload"
    exit 2
fi
stage_done payload ok "" $t0
# the CPU references beside the GPU are the Java kernels (float activations, as on the GPU)
JAVA=("$P/jdk/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xss4m -Dpagewarden.kernels=vector)
"${JAVA[@]}" -version 2>&1 | head -1

# one small HTTP client for the whole script (no curl needed): http METHOD URL TOKEN [JSON] prints the body,
# and the status on stderr; exit 0 on 2xx
http() {
    python3 - "$@" <<'PY'
import sys, urllib.request, urllib.error
method, url, token = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
req = urllib.request.Request(url, data=body, method=method)
if token:
    req.add_header("Authorization", "Bearer " + token)
if body is not None:
    req.add_header("Content-Type", "application/json")
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        sys.stdout.write(r.read().decode()); sys.exit(0)
except urllib.error.HTTPError as e:
    sys.stdout.write(e.read().decode()); print("HTTP %d" % e.code, file=sys.stderr); sys.exit(1)
except Exception as e:
    print(str(e), file=sys.stderr); sys.exit(1)
PY
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
secret() { python3 -c 'import secrets; print(secrets.token_urlsafe(24))'; }

# the model
if [ $MODE = dry ]; then
    MODEL=$P/models/stories260K.bin
    export PAGEWARDEN_MODEL_TOKENIZER=$P/models/tok512.bin
    stage_skip make-model "dry run: the payload's model"
else
    MODEL=$W/model.gguf
    run_stage make-model --expect "$MODEL" - "${JAVA[@]}" -jar "$P/pagewarden-engine.jar" make-model --shape "$SHAPE" \
        --dtype "$DTYPE" --format gguf --out "$MODEL" --seed 1 || { STOPPED_BY="make-model failed"; exit 1; }
fi

# the platform on embedded defaults, the backend forced
PORT=$(free_port)
MPORT=$(free_port)
while [ "$MPORT" = "$PORT" ]; do MPORT=$(free_port); done
ADMIN_TOKEN=$(secret)
METRICS_TOKEN=$(secret)
mkdir -p "$HOME_DIR"
# PostgreSQL refuses to run as root; as root, embedded PostgreSQL runs it in a user namespace. Where
# none can be made, the platform runs as nobody instead.
RUNAS=()
if [ "$(id -u)" = 0 ] && { [ "${RUN_AS_NOBODY:-0}" = 1 ] || ! unshare -U true 2>/dev/null; }; then
    log "root, and no user namespace here (unshare -U) or RUN_AS_NOBODY=1: the platform runs as nobody"
    RUNAS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chmod 755 "$W"
    chmod -R a+rX "$P" "$PLATFORM"
    chown -R 65534:65534 "$HOME_DIR"
    mkdir -p "$W/tmp" && chown 65534:65534 "$W/tmp"
    PLATFORM_JAVA_OPTS="-Djava.io.tmpdir=$W/tmp ${PLATFORM_JAVA_OPTS:-}"
fi
t0=$SECONDS
start_cmd=("${RUNAS[@]}" "${JAVA[@]}" -Duser.home="$HOME_DIR" ${PLATFORM_JAVA_OPTS:-} -jar "$PLATFORM/pagewarden-platform.jar")
log "starting the platform (backend $BACKEND) on port $PORT, management $MPORT, home $HOME_DIR"
PAGEWARDEN_HOME=$HOME_DIR PAGEWARDEN_MODEL_PATH=$MODEL PAGEWARDEN_ENGINE_BACKEND=$BACKEND \
    PAGEWARDEN_ADMIN_TOKEN=$ADMIN_TOKEN PAGEWARDEN_METRICS_TOKEN=$METRICS_TOKEN \
    SERVER_PORT=$PORT MANAGEMENT_SERVER_PORT=$MPORT "${start_cmd[@]}" > "$W/platform.log" 2>&1 &
PLATFORM_PID=$!
ready=0
wait_until=$((SECONDS + $(stage_left start)))
while [ $SECONDS -lt $wait_until ]; do
    if ! kill -0 $PLATFORM_PID 2>/dev/null; then break; fi
    if http GET "http://127.0.0.1:$MPORT/actuator/health/readiness" "" >/dev/null 2>&1; then ready=1; break; fi
    sleep 1
done
startup_s=$((SECONDS - t0))
if [ $ready = 0 ]; then
    if grep -q "backend 'gpu' is not available here" "$W/platform.log"; then
        why=$(grep -o "backend 'gpu' is not available here: .*" "$W/platform.log" | head -1)
        stage_done start failed "no usable GPU: the platform refused to start: $why" $t0 "${start_cmd[*]}"
        [ $MODE = dry ] && log "dry run: payloads ok; the real run would stop here with exit 3"
        python3 -c 'import json, sys; json.dump({"gpu": False, "reason": sys.argv[1]}, open(sys.argv[2], "w"))' \
            "$why" "$W/platform-check.json"
        STOPPED_BY="no usable GPU"
        exit 3
    fi
    kill -0 $PLATFORM_PID 2>/dev/null && why="not ready after ${startup_s} s (its budget)" || why="exited before it was ready"
    stage_done start failed "$why; log: $(grep -E 'ERROR|Exception' "$W/platform.log" | tail -1 | cut -c1-250)" $t0 "${start_cmd[*]}"
    tail -30 "$W/platform.log" >&2
    STOPPED_BY="the platform did not start"
    exit 1
fi
stage_done start ok "" $t0 "${start_cmd[*]}"
log "ready after ${startup_s} s"
if [ $MODE = dry ]; then
    log "dry run: the platform started with the GPU backend forced (a GPU is here); run without --dry-run"
    STOPPED_BY="dry run"
    exit 0
fi

# the backend actually used: the engine's health details, and the start-up log's line
t0=$SECONDS
http GET "http://127.0.0.1:$MPORT/actuator/health" "$METRICS_TOKEN" > "$W/health.json"
log_line=$(grep -o "Serving model .* on backend [a-z0-9_-]*" "$W/platform.log" | head -1)
# a tenant and its key, as docs/platform.md says (admin API with the admin token); its default limits (8 at once,
# 100000 tokens a minute) are cleared, so the load is the engine's alone
tenant=$(http POST "http://127.0.0.1:$PORT/admin/api/tenants" "$ADMIN_TOKEN" '{"name":"platform-check"}' 2>> "$W/tenant.err" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' 2>> "$W/tenant.err") \
    && http PUT "http://127.0.0.1:$PORT/admin/api/tenants/$tenant/limits" "$ADMIN_TOKEN" '{}' > /dev/null 2>> "$W/tenant.err" \
    && key=$(http POST "http://127.0.0.1:$PORT/admin/api/tenants/$tenant/keys" "$ADMIN_TOKEN" 2>> "$W/tenant.err" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])' 2>> "$W/tenant.err")
if [ -z "${key:-}" ]; then
    stage_done tenant failed "creating the tenant or its API key failed: $(last_words "$W/tenant.err")" $t0
    STOPPED_BY="no tenant"
    exit 1
fi
stage_done tenant ok "" $t0

log "bench-http: $CLIENTS clients, ${DURATION_S} s, max_tokens $MAX_TOKENS"
run_stage bench-http --expect "$W/bench-http.json" "$W/bench-http.json" "${JAVA[@]}" -jar "$P/pagewarden-engine.jar" bench-http \
    --base "http://127.0.0.1:$PORT" --key "$key" --clients "$CLIENTS" --duration "${DURATION_S}s" --max-tokens "$MAX_TOKENS" \
    --metrics-url "http://127.0.0.1:$MPORT/actuator/prometheus" --metrics-token "$METRICS_TOKEN" \
    --verify-receipts "$RECEIPTS" --receipt-wait 20s --json
bench_rc=$?
grep -v '^bench-http \[' "$W/bench-http.err" | tail -3 >&2
# the pool gauges once more, after bench-http's own wait for them
t0=$SECONDS
if http GET "http://127.0.0.1:$MPORT/actuator/prometheus" "$METRICS_TOKEN" 2> "$W/metrics.err" | grep -E '^kv_pool_pages' \
        > "$W/metrics-after.txt" && [ -s "$W/metrics-after.txt" ]; then
    stage_done metrics ok "" $t0
else
    stage_done metrics failed "no kv_pool_pages gauges: $(last_words "$W/metrics.err")" $t0
fi
t0=$SECONDS
if why=$(stop_platform); then stage_done stop ok "" $t0; else stage_done stop failed "killed $why" $t0; fi

python3 - "$W" "$W/platform-check.json" "$BACKEND" "$SHAPE" "$DTYPE" "$startup_s" "$bench_rc" "$log_line" <<'PY'
import json, os, re, sys
w, out, requested, shape, dtype, startup_s, bench_rc, log_line = sys.argv[1:9]
def load(name):
    try:
        return json.load(open(os.path.join(w, name)))
    except Exception as e:
        return {"unreadable": str(e)}
health = load("health.json")
engine = health.get("components", {}).get("engine", {}).get("details", {})
b = load("bench-http.json")
pools = {}
try:
    gauges = open(os.path.join(w, "metrics-after.txt")).read().splitlines()
except OSError:
    gauges = []
for line in gauges:
    m = re.match(r'kv_pool_pages\{(.*)\}\s+(\S+)', line)
    if m:
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        pools.setdefault(labels.get("worker", ""), {})[labels.get("state", "")] = float(m.group(2))
free = {wk: s.get("free", 0) == sum(s.values()) for wk, s in pools.items()}
used = engine.get("backend")
r = {
    "backend_requested": requested,
    "backend_used": used,
    "backend_log": log_line,
    "model": engine.get("model"), "shape": shape, "dtype": dtype,
    "context_window": engine.get("context_window"),
    "startup_s": int(startup_s),
    "clients": b.get("clients"), "duration_s": b.get("wall_s"), "max_tokens": b.get("max_tokens"),
    "completed": b.get("completed"),
    "ttft_ms_p50": b.get("ttft_ms_p50"), "ttft_ms_p99": b.get("ttft_ms_p99"),
    "itl_ms_p50": b.get("itl_ms_p50"), "itl_ms_p99": b.get("itl_ms_p99"),
    "output_tokens": b.get("output_tokens"), "output_tok_s": b.get("output_tok_s"),
    "errors": b.get("errors"), "errors_by_kind": b.get("errors_by_kind"),
    "pools_back_to_free": b.get("pool_back_to_free"), "pool_settle_s": b.get("pool_settle_s"),
    "pools_after": pools, "pools_free_after": bool(pools) and all(free.values()),
    "bench_http_exit": int(bench_rc),
    "receipts_checked": b.get("receipts_checked"), "receipts_by_status": b.get("receipts_by_status"),
    "receipts_ok": b.get("receipts_ok"),
}
r["pass"] = (int(bench_rc) == 0 and r["errors"] == 0 and bool(r["completed"]) and r["pools_free_after"]
             and r["receipts_ok"] is True and bool(r["receipts_checked"])
             and (requested == "auto" or used == requested))
json.dump(r, open(out, "w"), indent=2)
sys.exit(0 if r["pass"] else 1)
PY
rc=$?
failed=$(awk -F'\t' '$2 == "failed" {print $1}' "$W/stages.tsv" | tr '\n' ' ')
[ -z "$failed" ] || { log "failed: $failed"; exit 1; }
[ $rc = 0 ] || log "the run was not clean: see platform-check.json"
exit $rc
