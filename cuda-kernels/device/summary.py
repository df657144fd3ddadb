#!/usr/bin/env python3
"""summary.json (and summary.txt) of a device run, from its work folder: every stage's outcome
(stages.tsv), then the figures of whatever ran. A missing or unreadable result is reported as such,
never a crash: the summary is the one file a run must bring back.

usage: summary.py device|platform WORK_DIR [key=value ...]   (extra keys land in the summary as given)
"""
import glob
import json
import os
import re
import sys

HBM_BYTES_PER_S = 4.8e12  # H200 HBM3e, the vendor figure


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as e:  # missing, truncated by a timeout, not JSON
        return {"unreadable": "%s: %s" % (os.path.basename(path), e)}


def stages(work):
    out = []
    try:
        lines = open(os.path.join(work, "stages.tsv")).read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        f = (line.split("\t") + [""] * 5)[:5]
        out.append({"name": f[0], "status": f[1], "reason": f[3] or None, "seconds": int(f[2] or 0), "command": f[4] or None})
    return out


def timing(err_file, tag="gpu-timing"):
    """A bench's stderr lines of one tag as records: gpu-timing (-Dpagewarden.gpu.timing: per batch size, mean ms
    per step) or gpu-kernel (-Dpagewarden.gpu.kernelTiming: per step size and kernel, launches and ms per step)."""
    rows = []
    try:
        text = open(err_file).read()
    except OSError:
        return rows
    for m in re.finditer(r"^%s (.*)$" % re.escape(tag), text, re.M):
        kv = dict(p.split("=", 1) for p in m.group(1).split())
        rows.append({k: number(v) for k, v in kv.items()})
    return rows


def number(v):
    try:
        return float(v.rstrip("%")) if "." in v else int(v)
    except ValueError:
        return v


def device(work):
    s = {}
    checks = {}
    for f in sorted(glob.glob(os.path.join(work, "gpu-check*.json"))):
        name = os.path.basename(f)[:-len(".json")]
        c = load(f)
        checks[name] = {k: c.get(k) for k in ("pass", "backend", "gemm", "failures", "skipped", "unreadable", "reason")
                        if k in c}
        if name == "gpu-check" and c.get("copy_bandwidth_bytes_per_s"):
            s["copy_bandwidth_bytes_per_s"] = c["copy_bandwidth_bytes_per_s"]
        if name == "gpu-check" and c.get("device"):
            s["device"] = c["device"]
    if "gpu-check" not in checks:
        checks["gpu-check"] = {"unreadable": "gpu-check.json was not written"}
    s["checks"] = checks
    copy = s.get("copy_bandwidth_bytes_per_s") or 0
    decode, prefill, timings, kernels = [], [], {}, {}
    for f in sorted(glob.glob(os.path.join(work, "bench-*.json"))):
        run = os.path.basename(f)[len("bench-"):-len(".json")]
        timings[run] = timing(os.path.join(work, "bench-%s.err" % run))
        per_kernel = timing(os.path.join(work, "bench-%s.err" % run), "gpu-kernel")
        if per_kernel:
            kernels[run] = per_kernel
        b = load(f)
        if "unreadable" in b:
            decode.append({"run": run, "unreadable": b["unreadable"]})
            continue
        wb = b.get("weight_bytes_per_token", 0) or 0
        dec = b.get("decode_tok_s", {})
        items = dec.items() if isinstance(dec, dict) else [(x.get("batch"), x.get("tok_s")) for x in dec]
        for batch, toks in items:
            row = {"run": run, "parameters": b.get("parameters"), "batch": int(batch), "tok_s": toks}
            if toks is not None:
                bw = wb * float(toks) / int(batch)  # the weights are read once per step of `batch` tokens
                row.update({"weights_bytes_per_s": bw, "pct_of_copy": 100 * bw / copy if copy else None,
                            "pct_of_hbm": 100 * bw / HBM_BYTES_PER_S})
            decode.append(row)
        prefill.append({"run": run, "parameters": b.get("parameters"), "prompt_tokens": b.get("prompt_tokens"),
                        "tok_s": b.get("prefill_tok_s")})
    s["decode"] = decode
    s["prefill"] = prefill
    s["timing"] = timings
    s["kernels"] = kernels
    return s


def platform(work):
    return {"platform": load(os.path.join(work, "platform-check.json"))}


def text(s):
    lines = ["%-28s %-8s %5s  %s" % ("stage", "status", "s", "reason")]
    for st in s["stages"]:
        lines.append("%-28s %-8s %5d  %s" % (st["name"], st["status"], st["seconds"], st["reason"] or ""))
    for name, c in s.get("checks", {}).items():
        lines.append("%s: pass=%s failures=%s" % (name, c.get("pass"), json.dumps(c.get("failures", c.get("unreadable")))))
    for d in s.get("decode", []):
        if "tok_s" in d and d["tok_s"] is not None:
            lines.append("%-24s batch %3d  %10.1f tok/s  weights %8.1f GB/s  %s%% of copy" % (
                d["run"], d["batch"], d["tok_s"], d["weights_bytes_per_s"] / 1e9,
                "%.1f" % d["pct_of_copy"] if d.get("pct_of_copy") is not None else "n/a"))
    for p in s.get("prefill", []):
        lines.append("%-24s prefill %s tok/s (%s prompt tokens)" % (p["run"], p["tok_s"], p["prompt_tokens"]))
    for run, rows in s.get("timing", {}).items():
        for r in rows:
            lines.append("%-24s timing %s" % (run, " ".join("%s=%s" % kv for kv in r.items())))
    for run, rows in s.get("kernels", {}).items():
        lines.append("%-24s per kernel (ms a step, share of the step's kernel time):" % run)
        for r in rows:
            lines.append("  rows %5s  %-26s %6s launches %10s ms %6s%%" % (r.get("rows"), r.get("kernel"), r.get("launches"),
                                                                   r.get("ms"), r.get("share")))
    if "platform" in s:
        lines.append(json.dumps(s["platform"], indent=2))
    return "\n".join(lines) + "\n"


def main():
    kind, work = sys.argv[1], sys.argv[2]
    s = {"stages": stages(work)}
    for kv in sys.argv[3:]:
        k, v = kv.split("=", 1)
        s[k] = int(v) if v.isdigit() else v
    s.update(device(work) if kind == "device" else platform(work))
    s["ok"] = bool(s["stages"]) and all(st["status"] != "failed" for st in s["stages"])
    with open(os.path.join(work, "summary.json"), "w") as f:
        json.dump(s, f, indent=2)
    t = text(s)
    with open(os.path.join(work, "summary.txt"), "w") as f:
        f.write(t)
    sys.stdout.write(t)


if __name__ == "__main__":
    main()
