"""Issue 40 item 7, llama.cpp part: a CUDA build of llama.cpp's own buffers beside the fit planner's rows.

For each case (a tiny GGUF of tests/llamacpp/make_gguf.py and an engine command line, as in
tests/integration/hf-fetch/test_fit_llamacpp.py, with -ngl): runs llama.cpp on it (-fit off, -lv 4, a 1-token
generation for llama-completion; llama-server is stopped once it listens) with fit_gpu_shim.so preloaded when
given, reads its "... buffer size = X MiB" lines (model, KV, RS, compute, output per buffer name) and the shim's
exact cache tensor and buffer bytes, and puts `hf-fetch inspect GGUF --engine-args LINE GPUS --json` beside them.
Writes OUT/llamacpp.json and OUT/llamacpp.md. A case that fails is a row with its error; the others go on.

  python fit_gpu_llamacpp.py --bin-dir DIR --hf-fetch BIN --gguf-dir DIR --out DIR [--shim SO] [--device CUDA0]
      [--gpus-arg '--gpus local'] [--prefix 'LOADER --library-path ...'] [--cwd DIR]
  --parse LOG: print what the parser reads from a captured llama.cpp log (a CPU log reads the same: --device CPU)
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

MiB = 1 << 20
# (family, the engine's command line): the judge's CASES with -ngl (all layers, and 2 of llama's 4).
CASES = [
    ("llama", "llama-completion -c 1000 -ngl 99"),
    ("llama", "llama-completion -c 65536 -ngl 99"),
    ("llama", "llama-completion -c 10000 -np 3 -fa off -ngl 99"),
    ("llama", "llama-completion -c 4096 -ngl 2"),
    ("gemma3", "llama-completion -c 10000 -np 3 -ub 100 -ngl 99"),
    ("gemma3", "llama-completion -c 3000 -ctk q8_0 -ctv q8_0 -fa on -ngl 99"),  # a pair ggml-cuda's FA builds
    ("deepseek2", "llama-completion -c 3000 -np 2 -ctk bf16 -ctv bf16 -ngl 99"),
    ("mamba", "llama-completion -c 1000 -np 3 -ngl 99"),
    ("jamba", "llama-completion -c 5000 -np 2 -fa off -ctk bf16 -ngl 99"),
    ("llama", "llama-server -np 3 -c 2000 -ngl 99"),
    ("gemma3", "llama-server -c 10000 -ngl 99"),
    ("jamba", "llama-server -c 3000 -ngl 99"),
]

BUFFER = re.compile(r"(\w+):\s+(\S+)\s+(model|KV|RS|compute|output) buffer size\s*=\s*([0-9.]+) MiB")


def parse(text, lines=None):
    """{(buffer name, kind): MiB summed over lines} from llama.cpp's log (gemma3 has two KV caches: two lines,
    each rounded: `lines` counts them, for the tolerance)."""
    out = {}
    for m in BUFFER.finditer(text):
        key = (m.group(2), m.group(3))
        out[key] = round(out.get(key, 0.0) + float(m.group(4)), 2)
        if lines is not None:
            lines[key] = lines.get(key, 0) + 1
    return out


def parse_shim(path):
    tensors, buffers = {}, []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                w = line.split()
                if w[:2] == ["provkit-cache", "tokenize"]:
                    continue
                if w[:1] == ["provkit-cache"]:
                    tensors[w[1]] = int(w[2])
                elif w[:1] == ["provkit-buffer"]:
                    buffers.append((w[1], w[2], int(w[3])))
    return tensors, buffers


def planned_tensors(fit):
    """The planner's layers as llama.cpp names its cache tensors (as test_fit_llamacpp.py does)."""
    out = {}
    for layer in fit.get("layers") or []:
        for kind in "kvrs":
            if layer.get(kind + "_bytes"):
                out["cache_%s_l%d" % (kind, layer["index"])] = layer[kind + "_bytes"]
    return out


def within(planned, mib, lines=1):
    """A planner figure (bytes) against llama.cpp's printed MiB with 2 decimals (a sum of `lines` such figures)."""
    if planned is None or mib is None:
        return None
    return abs(planned / MiB - mib) <= 0.005 * max(lines, 1) + 1e-9


def run_engine(a, family, line, gguf, logpath, shimlog):
    words = shlex.split(line)
    tool, args = words[0], words[1:]
    binary = os.path.join(a.bin_dir, tool)
    if not os.path.exists(binary):
        return None, f"{tool} was not built"
    cmd = shlex.split(a.prefix) + [binary, "-m", gguf, "-fit", "off", "-t", "4", "--no-warmup", "-lv", "4"] + args
    if tool == "llama-server":
        cmd += ["--host", "127.0.0.1", "--port", str(a.port)]
        a.port += 1
    else:
        # make_gguf.py's models have no tokenizer: llama.cpp aborts when it tokenizes the prompt, after every
        # buffer is allocated (the shim ends it there cleanly, once the log has drained)
        cmd += ["-n", "1", "-p", "hi", "-no-cnv"]
    env = dict(os.environ, GGML_NO_BACKTRACE="1", PROVKIT_CACHE_LOG=shimlog)
    if a.shim:
        env["LD_PRELOAD"] = a.shim
    if os.path.exists(shimlog):
        os.unlink(shimlog)
    t0 = time.monotonic()
    with open(logpath, "w") as logf:
        logf.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        logf.flush()
        p = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                             cwd=a.cwd or None, start_new_session=True)
        stopped = None
        while p.poll() is None:
            if time.monotonic() - t0 > a.timeout:
                stopped = f"still running after {a.timeout} s: killed"
                break
            if tool == "llama-server":
                with open(logpath, errors="replace") as f:
                    text = f.read()
                if "listening on" in text or "server is listening" in text:
                    stopped = "stopped once it listened"
                    break
            time.sleep(0.2)
        if p.poll() is None:
            os.killpg(p.pid, 15)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
    with open(logpath, errors="replace") as f:
        text = f.read()
    return {"cmd": cmd, "rc": p.returncode, "stopped": stopped, "seconds": round(time.monotonic() - t0, 2),
            "text": text}, None


def plan(a, gguf, line):
    cmd = [a.hf_fetch, "inspect", gguf, "--engine-args", line, *shlex.split(a.gpus_arg), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    try:
        return p.returncode, json.loads(p.stdout.splitlines()[-1]), cmd
    except Exception:
        raise RuntimeError(f"inspect exit {p.returncode}: {(p.stderr or p.stdout)[-1500:]}")


def fmt(b):
    return "" if b is None else "%.2f" % (b / MiB)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir")
    ap.add_argument("--hf-fetch")
    ap.add_argument("--gguf-dir")
    ap.add_argument("--out")
    ap.add_argument("--shim", default="")
    ap.add_argument("--device", default="CUDA0")
    ap.add_argument("--gpus-arg", default="--gpus local")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--cwd", default="")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--port", type=int, default=18431)
    ap.add_argument("--only", default="", help="comma-separated case numbers (0-based)")
    ap.add_argument("--parse")
    a = ap.parse_args()
    if a.parse:
        with open(a.parse, errors="replace") as f:
            for (name, kind), mib in sorted(parse(f.read()).items()):
                print(f"{name}\t{kind}\t{mib:.2f} MiB")
        return
    os.makedirs(a.out, exist_ok=True)
    logs = os.path.join(a.out, "llamacpp-logs")
    os.makedirs(logs, exist_ok=True)
    dev = a.device
    rows = []
    only = {int(x) for x in a.only.split(",") if x}
    for i, (family, line) in enumerate(CASES):
        if only and i not in only:
            continue
        row = {"case": i, "family": family, "line": line, "errors": []}
        rows.append(row)
        gguf = os.path.join(a.gguf_dir, family + ".gguf")
        shimlog = os.path.join(logs, f"{i:02d}-{family}.shim")
        try:
            ran, why = run_engine(a, family, line, gguf, os.path.join(logs, f"{i:02d}-{family}.log"), shimlog)
        except Exception as e:
            ran, why = None, f"llama.cpp did not run: {e}"
        if ran is None:
            row["errors"].append(why)
        else:
            nlines = {}
            bufs = parse(ran["text"], nlines)
            tensors, shim_buffers = parse_shim(shimlog)
            row["llamacpp"] = {"rc": ran["rc"], "stopped": ran["stopped"], "seconds": ran["seconds"],
                               "buffers_mib": {f"{n} {k}": v for (n, k), v in sorted(bufs.items())},
                               "buffer_lines": {f"{n} {k}": v for (n, k), v in sorted(nlines.items())},
                               # llama.cpp's own table at exit (llama-server): model, context, compute and
                               # "unaccounted" per device
                               "memory_breakdown": [l.split("common_memory_breakdown_print:", 1)[1].strip()
                                                    for l in ran["text"].splitlines()
                                                    if "common_memory_breakdown_print:" in l],
                               "cache_tensors": tensors,
                               "shim_buffers": [{"cache": c == "cache", "name": n, "bytes": b}
                                                for c, n, b in shim_buffers]}
            if not bufs:
                row["errors"].append("no buffer lines in llama.cpp's log (exit %s): %s" % (
                    ran["rc"], " | ".join(ran["text"].splitlines()[-4:])[-600:]))
            if f"{dev} model" not in row["llamacpp"]["buffers_mib"] and bufs:
                row["errors"].append(f"llama.cpp put no model buffer on {dev}")
        try:
            rc, report, cmd = plan(a, gguf, line)
            fit = report.get("fit") or {}
            g = (fit.get("gpus") or [{}])[0]
            row["planner"] = {"exit": rc, "inspect": " ".join(shlex.quote(c) for c in cmd),
                              "weights_bytes": fit.get("weights_bytes"), "host_bytes": fit.get("host_bytes"),
                              "kv_bytes": fit.get("kv_bytes"), "recurrent_bytes": fit.get("recurrent_bytes"),
                              "compute_bytes": fit.get("compute_bytes"), "gpu0": g,
                              "tensors": planned_tensors(fit), "message": report.get("message")}
        except Exception as e:
            row["errors"].append("inspect: " + str(e))
        pl, lc = row.get("planner"), row.get("llamacpp")
        if pl and lc:
            b = lc["buffers_mib"]
            g = pl["gpu0"]
            exact = [s for s in lc["shim_buffers"] if s["name"] == dev]
            exact_weights = [s["bytes"] for s in exact if not s["cache"]]
            exact_cache = [s["bytes"] for s in exact if s["cache"]]
            nl = lc["buffer_lines"]
            row["compare"] = {
                "weights": {"planner": g.get("weights_bytes"), "llamacpp_mib": b.get(f"{dev} model"),
                            "llamacpp_bytes": sum(exact_weights) if exact_weights else None},
                # the planner's host bytes: the input embeddings and the weights, KV and state of the layers
                # left on the host (-ngl below the layers)
                "host": {"planner": pl["host_bytes"], "llamacpp_mib": round(sum(
                    v for k, v in b.items() if k.split()[1] in ("model", "KV", "RS") and k.split()[0] != dev), 2)},
                "kv": {"planner": g.get("kv_bytes"), "llamacpp_mib": b.get(f"{dev} KV")},
                "recurrent": {"planner": g.get("recurrent_bytes"), "llamacpp_mib": b.get(f"{dev} RS")},
                "cache_buffers": {"planner": (g.get("kv_bytes") or 0) + (g.get("recurrent_bytes") or 0),
                                  "llamacpp_bytes": sum(exact_cache) if exact_cache else None},
                "compute": {"planner": pl["compute_bytes"], "llamacpp_mib": b.get(f"{dev} compute"),
                            "host_mib": round(sum(v for k, v in b.items() if k.endswith(" compute")
                                                  and k.split()[0] != dev), 2),
                            "output_mib": round(sum(v for k, v in b.items() if k.endswith(" output")), 2)},
                "cache_tensors_exact": (pl["tensors"] == lc["cache_tensors"]) if lc["cache_tensors"] else None,
            }
            c = row["compare"]
            kinds = {"weights": [f"{dev} model"], "kv": [f"{dev} KV"], "recurrent": [f"{dev} RS"],
                     "host": [k for k in nl if k.split()[1] in ("model", "KV", "RS") and k.split()[0] != dev]}
            for k, keys in kinds.items():
                mib = c[k]["llamacpp_mib"]
                if mib is None and k in ("kv", "recurrent"):
                    mib = 0.0 if not c[k]["planner"] else None
                c[k]["within_rounding"] = within(c[k]["planner"], mib, sum(nl.get(x, 0) for x in keys))
            if c["weights"]["llamacpp_bytes"] is not None:
                c["weights"]["exact"] = c["weights"]["planner"] == c["weights"]["llamacpp_bytes"]
            if c["cache_buffers"]["llamacpp_bytes"] is not None:
                c["cache_buffers"]["exact"] = c["cache_buffers"]["planner"] == c["cache_buffers"]["llamacpp_bytes"]
            if pl["tensors"] != lc["cache_tensors"] and lc["cache_tensors"]:
                diff = {k: (pl["tensors"].get(k), lc["cache_tensors"].get(k))
                        for k in sorted(set(pl["tensors"]) | set(lc["cache_tensors"]))
                        if pl["tensors"].get(k) != lc["cache_tensors"].get(k)}
                c["cache_tensor_diff"] = diff
        print("[llama.cpp] case %d %s: %s -> %s" % (i, family, line, json.dumps(row.get("compare") or row["errors"])),
              flush=True)
    with open(os.path.join(a.out, "llamacpp.json"), "w") as f:
        json.dump(rows, f, indent=1)
    md = [f"## llama.cpp ({dev}) buffers beside the planner's GPU 0 rows (MiB; llama.cpp prints 2 decimals)", "",
          "| # | family | line | weights planner / llama.cpp | host planner / llama.cpp | KV planner / llama.cpp | "
          "RS planner / llama.cpp | cache tensors exact | compute planner / llama.cpp (+host) | errors |",
          "|---|---|---|---|---|---|---|---|---|---|"]

    def pair(c, k):
        x = c[k]
        mark = {True: " ok", False: " DIFF", None: ""}[x.get("within_rounding")]
        if x.get("exact") is not None:
            mark += " (bytes %s)" % ("equal" if x["exact"] else "%s vs %s" % (x["planner"], x.get("llamacpp_bytes")))
        return "%s / %s%s" % (fmt(x["planner"]), "" if x["llamacpp_mib"] is None else "%.2f" % x["llamacpp_mib"],
                              mark)

    for row in rows:
        c = row.get("compare")
        if c:
            comp = "%s / %s (+%.2f host, %.2f output)" % (
                "null" if c["compute"]["planner"] is None else fmt(c["compute"]["planner"]),
                c["compute"]["llamacpp_mib"], c["compute"]["host_mib"], c["compute"]["output_mib"])
            cells = [pair(c, "weights"), pair(c, "host"), pair(c, "kv"), pair(c, "recurrent"),
                     {True: "yes", False: "NO", None: "no shim"}[c["cache_tensors_exact"]], comp]
        else:
            cells = [""] * 6
        md.append("| %d | %s | `%s` | %s | %s |" % (row["case"], row["family"], row["line"], " | ".join(cells),
                                                   "; ".join(row["errors"]).replace("|", "/")[:300]))
    with open(os.path.join(a.out, "llamacpp.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    sys.exit(0 if all(not r["errors"] for r in rows) else 1)


if __name__ == "__main__":
    main()
