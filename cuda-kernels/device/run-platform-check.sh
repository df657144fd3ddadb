#!/usr/bin/env bash
# The platform serving from the GPU, on a bare GPU machine (see cuda-kernels/README.md, "The platform on
# the GPU"): reassembles and checks the engine and platform payloads (SHA-256 of every part), writes a
# model with the engine's make-model (default: 2.9B F16, a Llama-3.2-3B shape), starts the platform jar on
# embedded defaults (its own PostgreSQL, PAGEWARDEN_HOME under /tmp, free ports) with the backend forced,
# waits for readiness, creates a tenant and an API key through the admin API, runs bench-http (CLIENTS
# streaming clients for DURATION_S), reads the KV pool gauges afterwards and writes platform-check.json
# to $OUT (or ./device-out): backend used, TTFT p50/p99, tokens/s, errors, pools free.
# Env: BACKEND (gpu; cpu or auto for a run without a GPU), DURATION_S (60), CLIENTS (32), MAX_TOKENS (64),
# SHAPE (the 2.9B shape; e.g. stories260K or 110M), DTYPE (f16), BUDGET_S (330: every stage's timeout is
# cut to it), PLATFORM_JAVA_OPTS (extra JVM options, e.g. -Dpagewarden.gpu.gemm=true), RUN_AS_NOBODY=1 (as
# root: run the platform as nobody, as where no user namespace can be made).
# Exit 0 clean, 1 a stage failed or the run was not clean, 2 no payload, 3 no usable GPU.
# --dry-run: checks the payloads and starts the platform on the real model with the GPU backend forced:
# without a GPU it refuses to start, and the script says why and exits 3.
set -uo pipefail
cd "$(dirname "$0")/../.."
. cuda-kernels/device/payload-lib.sh
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
BACKEND=${BACKEND:-gpu}
DURATION_S=${DURATION_S:-60}
CLIENTS=${CLIENTS:-32}
MAX_TOKENS=${MAX_TOKENS:-64}
SHAPE=${SHAPE:-dim=3072,hidden=8192,layers=28,heads=24,kv_heads=8,vocab=32000,seq=2048}
DTYPE=${DTYPE:-f16}
DEADLINE=$((SECONDS + ${BUDGET_S:-330}))
limit() { local l=$((DEADLINE - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
log() { echo "run-platform-check.sh: $*" >&2; }

# the payloads: checked part by part, unpacked once per content (a second run on the same machine reuses them)
P=/tmp/pw-payload
unpack_parts cuda-kernels/device/payload engine $P || exit 2
unpack_parts cuda-kernels/device/platform-payload platform /tmp/pw-platform || exit 2
JAVA="$P/jdk/bin/java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xss4m"
ENGINE="$JAVA -jar $P/pagewarden-engine.jar"
$P/jdk/bin/java -version 2>&1 | head -1

W=$(mktemp -d /tmp/pw-platform-check.XXXX)
HOME_DIR=$W/home
PLATFORM_PID=
finish() {
    if [ -n "$PLATFORM_PID" ] && kill -0 "$PLATFORM_PID" 2>/dev/null; then
        kill -TERM "$PLATFORM_PID"   # graceful: the platform stops its embedded PostgreSQL itself
        for _ in $(seq 30); do kill -0 "$PLATFORM_PID" 2>/dev/null || break; sleep 1; done
        kill -KILL "$PLATFORM_PID" 2>/dev/null
    fi
    cp -f "$W"/platform.log "$W"/bench-http.json "$W"/bench-http.err "$W"/metrics-after.txt "$OUT/" 2>/dev/null
    [ "$DRY" = 1 ] || rm -f "$W/model.gguf"
}
trap finish EXIT

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
if [ "$DRY" = 1 ]; then
    BACKEND=gpu
    MODEL=$P/models/stories260K.bin
    export PAGEWARDEN_MODEL_TOKENIZER=$P/models/tok512.bin
else
    MODEL=$W/model.gguf
    log "make-model --shape $SHAPE --dtype $DTYPE"
    timeout $(limit 90) $ENGINE make-model --shape "$SHAPE" --dtype "$DTYPE" --format gguf --out "$MODEL" --seed 1 2>&1 | tail -1
    [ -f "$MODEL" ] || { log "make-model failed"; exit 1; }
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
RUNAS=
if [ "$(id -u)" = 0 ] && { [ "${RUN_AS_NOBODY:-0}" = 1 ] || ! unshare -U true 2>/dev/null; }; then
    log "root, and no user namespace here (unshare -U) or RUN_AS_NOBODY=1: the platform runs as nobody"
    RUNAS="setpriv --reuid=65534 --regid=65534 --clear-groups"
    chmod 755 "$W"
    chmod -R a+rX $P /tmp/pw-platform
    chown -R 65534:65534 "$HOME_DIR"
    mkdir -p "$W/tmp" && chown 65534:65534 "$W/tmp"
    PLATFORM_JAVA_OPTS="-Djava.io.tmpdir=$W/tmp ${PLATFORM_JAVA_OPTS:-}"
fi
log "starting the platform (backend $BACKEND) on port $PORT, management $MPORT, home $HOME_DIR"
start=$SECONDS
PAGEWARDEN_HOME=$HOME_DIR PAGEWARDEN_MODEL_PATH=$MODEL PAGEWARDEN_ENGINE_BACKEND=$BACKEND \
    PAGEWARDEN_ADMIN_TOKEN=$ADMIN_TOKEN PAGEWARDEN_METRICS_TOKEN=$METRICS_TOKEN \
    SERVER_PORT=$PORT MANAGEMENT_SERVER_PORT=$MPORT \
    $RUNAS $JAVA -Duser.home="$HOME_DIR" ${PLATFORM_JAVA_OPTS:-} -jar /tmp/pw-platform/pagewarden-platform.jar \
    > "$W/platform.log" 2>&1 &
PLATFORM_PID=$!
ready=0
wait_until=$((SECONDS + $(limit 240)))
while [ $SECONDS -lt $wait_until ]; do
    if ! kill -0 $PLATFORM_PID 2>/dev/null; then break; fi
    if http GET "http://127.0.0.1:$MPORT/actuator/health/readiness" "" >/dev/null 2>&1; then ready=1; break; fi
    sleep 1
done
startup_s=$((SECONDS - start))
if [ $ready = 0 ]; then
    if grep -q "backend 'gpu' is not available here" "$W/platform.log"; then
        why=$(grep -o "backend 'gpu' is not available here: .*" "$W/platform.log" | head -1)
        log "no usable GPU: the platform refused to start: $why"
        [ "$DRY" = 1 ] && log "dry run: payloads ok; the real run would stop here with exit 3"
        printf '{"gpu": false, "reason": "%s"}\n' "$(echo "$why" | sed 's/"/\\"/g')" > "$OUT/platform-check.json"
        exit 3
    fi
    log "the platform did not become ready in ${startup_s} s; the end of its log:"
    tail -30 "$W/platform.log" >&2
    exit 1
fi
log "ready after ${startup_s} s"
if [ "$DRY" = 1 ]; then
    log "dry run: the platform started with the GPU backend forced (a GPU is here); run without --dry-run"
    exit 0
fi

# the backend actually used: the engine's health details, and the start-up log's line
health=$(http GET "http://127.0.0.1:$MPORT/actuator/health" "$METRICS_TOKEN")
echo "$health" > "$W/health.json"
log_line=$(grep -o "Serving model .* on backend [a-z0-9_-]*" "$W/platform.log" | head -1)

# a tenant and its key, as docs/platform.md says (admin API with the admin token)
tenant=$(http POST "http://127.0.0.1:$PORT/admin/api/tenants" "$ADMIN_TOKEN" '{"name":"platform-check"}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])') || { log "creating the tenant failed"; exit 1; }
key=$(http POST "http://127.0.0.1:$PORT/admin/api/tenants/$tenant/keys" "$ADMIN_TOKEN" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])') || { log "creating the API key failed"; exit 1; }

log "bench-http: $CLIENTS clients, ${DURATION_S} s, max_tokens $MAX_TOKENS"
timeout $(limit $((DURATION_S + 120))) $ENGINE bench-http --base "http://127.0.0.1:$PORT" --key "$key" \
    --clients "$CLIENTS" --duration "${DURATION_S}s" --max-tokens "$MAX_TOKENS" \
    --metrics-url "http://127.0.0.1:$MPORT/actuator/prometheus" --metrics-token "$METRICS_TOKEN" --json \
    > "$W/bench-http.json" 2> "$W/bench-http.err"
bench_rc=$?
grep -v '^bench-http \[' "$W/bench-http.err" | tail -3 >&2
# the pool gauges once more, after bench-http's own wait for them
http GET "http://127.0.0.1:$MPORT/actuator/prometheus" "$METRICS_TOKEN" | grep -E '^kv_pool_pages' > "$W/metrics-after.txt"

python3 - "$W" "$OUT/platform-check.json" "$BACKEND" "$SHAPE" "$DTYPE" "$startup_s" "$bench_rc" "$log_line" <<'PY'
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
for line in open(os.path.join(w, "metrics-after.txt")):
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
}
r["pass"] = (int(bench_rc) == 0 and r["errors"] == 0 and bool(r["completed"]) and r["pools_free_after"]
             and (requested == "auto" or used == requested))
json.dump(r, open(out, "w"), indent=2)
print(json.dumps(r, indent=2))
sys.exit(0 if r["pass"] else 1)
PY
