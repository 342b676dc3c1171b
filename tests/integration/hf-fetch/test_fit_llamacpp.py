"""hf-fetch inspect --engine-args (issue 40): the fit planner judged by llama.cpp itself.

Debian unstable's llama.cpp (tests/llamacpp/fetch-judge.sh: apt-get download into a private sysroot,
cached in the build tree) loads tiny random-weight GGUFs of each family (tests/llamacpp/make_gguf.py,
written by Debian's gguf-py) under an LD_PRELOAD shim (tests/llamacpp/cache_shim.c) that prints every
cache tensor's ggml_nbytes; the planner must give the same bytes for every layer, and refuse what
llama.cpp refuses. No network, no packages: the tests fail, never skip.

Run one: python3 test_fit_llamacpp.py test_kv_bytes_match_llamacpp
"""

import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import BUILD, SOURCE, check, main, run, tool  # noqa: E402

sys.path.insert(0, os.path.join(SOURCE, "tests", "llamacpp"))
from judge import Judge  # noqa: E402

CACHE = os.path.join(BUILD, "llamacpp-judge")

# (family, the engine's command line): every flag that changes what llama.cpp allocates.
CASES = [
    ("llama", "llama-completion -c 1000"),
    ("llama", "llama-completion -c 100"),
    ("llama", "llama-completion"),
    ("llama", "llama-completion -c 10000 -np 3"),
    ("llama", "llama-completion -c 10000 -np 3 -fa off"),
    ("llama", "llama-server -c 10000"),
    ("llama", "llama-server -np 3 -c 2000"),
    ("llama", "llama-server -np 3 -c 2000 -kvu"),
    ("llama", "llama-server -c 5000 -ctk bf16 -ctv f32 -fa off"),
    ("gemma3", "llama-completion -c 1000"),
    ("gemma3", "llama-server -c 10000"),
    ("gemma3", "llama-completion -c 10000 -np 3 -ub 100"),
    ("gemma3", "llama-server -np 3 -c 5000 -kvu"),
    ("gemma3", "llama-completion -c 5000 --swa-full -fa off"),
    ("gemma3", "llama-completion -c 3000 -ctk q8_0 -ctv q4_0 -fa on"),
    ("gemma3", "llama-server -c 3000 -np 2 -ctk q4_1 -ctv iq4_nl -fa on -b 64"),
    ("gemma3", "llama-server -c 3000 -np 2 -ctk q5_0 -ctv q5_1 -fa on --swa-full -ub 256"),
    ("deepseek2", "llama-completion -c 1000"),
    ("deepseek2", "llama-completion -c 1000 -ctk q8_0 -ctv q8_0"),
    ("deepseek2", "llama-server -c 3000 -fa off"),
    ("deepseek2", "llama-completion -c 3000 -np 2 -ctk bf16 -ctv bf16"),
    ("mamba", "llama-completion -c 1000"),
    ("mamba", "llama-completion -c 1000 -np 3"),
    ("mamba", "llama-server"),
    ("mamba", "llama-server -np 2 -ctk q8_0 -ctv q8_0 -fa on"),
    ("jamba", "llama-completion -c 1000"),
    ("jamba", "llama-server -c 3000"),
    ("jamba", "llama-completion -c 5000 -np 2 -fa off -ctk bf16"),
]

# What llama.cpp refuses, and the sentence it says (the planner must say it too).
REFUSALS = [
    ("llama", "llama-completion -c 1000 -ctv q8_0 -fa off", "quantized V cache requires flash_attn to be enabled"),
    ("llama", "llama-completion -c 1000 -ctk q8_0", "does not divide n_embd_head_k=16"),
    ("deepseek2", "llama-completion -c 1000 -ctk q8_0", "model does not support different K (q8_0) and V (f16)"),
    ("deepseek2", "llama-completion -ctk q8_0 -ctv q8_0 -fa off", "quantized V cache requires flash_attn"),
    ("llama", "llama-completion -c 1000 --kv-unified", "invalid argument"),
    ("llama", "llama-server -ctk q3_k", "q3_k"),
]


def judge():
    try:
        return Judge(CACHE)
    except Exception as e:  # no network, a package gone: the judge is missing, and that is a failure
        check(False, "llama.cpp could not be made ready as the judge", e)


def model(j, family):
    # Named by make_gguf.py's text, so a changed writer writes the models again.
    with open(os.path.join(SOURCE, "tests", "llamacpp", "make_gguf.py"), "rb") as f:
        version = hashlib.sha256(f.read()).hexdigest()[:12]
    os.makedirs(os.path.join(CACHE, "models"), exist_ok=True)
    return j.make_model(family, os.path.join(CACHE, "models", f"{family}-{version}.gguf"))


def plan(path, engine_args, *more, expect=0):
    r = run([tool("hf-fetch"), "inspect", path, "--engine-args", engine_args, "--json", *more], expect=expect)
    return r, json.loads(r.out.splitlines()[-1])


def planned_tensors(fit):
    """The planner's layers as llama.cpp names its cache tensors (a tensor of 0 bytes is none)."""
    out = {}
    for layer in fit["layers"]:
        for kind in "kvrs":
            if layer[kind + "_bytes"]:
                out["cache_%s_l%d" % (kind, layer["index"])] = layer[kind + "_bytes"]
    return out


def test_kv_bytes_match_llamacpp():
    j = judge()
    wrong = []
    for family, line in CASES:
        allocated, refused = j.allocate(model(j, family), line)
        check(refused is None, f"llama.cpp refused {family}: {line}", refused)
        _, summary = plan(model(j, family), line)
        planned = planned_tensors(summary["fit"])
        if planned != allocated:
            wrong.append(f"{family}: {line}\n  llama.cpp: {allocated}\n  planner:   {planned}")
        kv = sum(v for k, v in allocated.items() if k.startswith(("cache_k", "cache_v")))
        state = sum(v for k, v in allocated.items() if k.startswith(("cache_r", "cache_s")))
        if (summary["fit"]["kv_bytes"], summary["fit"]["recurrent_bytes"]) != (kv, state):
            wrong.append(f"{family}: {line}: totals {summary['fit']['kv_bytes']}, "
                         f"{summary['fit']['recurrent_bytes']}; llama.cpp {kv}, {state}")
    check(not wrong, f"{len(wrong)} of {len(CASES)} plans differ from llama.cpp's allocation", "\n".join(wrong))


def test_refusals_match_llamacpp():
    j = judge()
    for family, line, sentence in REFUSALS:
        allocated, refused = j.allocate(model(j, family), line)
        check(allocated is None and sentence in refused, f"llama.cpp did not refuse {line} with '{sentence}'",
              refused or allocated)
        r, summary = plan(model(j, family), line, expect=2)
        check(summary.get("reason") in ("engine_refuses",), f"{line}: reason {summary.get('reason')}", r.out)
        check(sentence in summary.get("message", ""), f"{line}: the planner does not say '{sentence}'", r.out)


def test_gguf_arrays_are_values():
    j = judge()
    r = run([tool("hf-fetch"), "inspect", model(j, "llama"), "--json"])
    meta = json.loads(r.out.splitlines()[-1])["files"][0]["metadata"]
    check(meta["llama.attention.head_count_kv"] == [2, 2, 2, 2], "head_count_kv is not its values",
          meta["llama.attention.head_count_kv"])
    check(meta["tokenizer.ggml.model"] == "none", "the scalar keys are kept", meta)


def test_does_not_fit_is_its_own_reason():
    j = judge()
    path = model(j, "llama")
    # 4 layers x (K + V) x 32 x 2 bytes = 512 bytes a cell; the weights are ~0.6 MB (f32).
    _, fits = plan(path, "llama-server -c 4096 -ts 1,1", "--gpu-memory", "4M,4M")
    check(fits["exit_code"] == 0 and fits["fit"]["fits"], "4096 cells do not fit 2 x 4 MiB", fits["fit"])
    check(len(fits["fit"]["gpus"]) == 2 and fits["fit"]["tensor_split"] == [0.5, 0.5], "two cards", fits["fit"])
    # 1 MiB cards: card 0 holds 3 layers (444 KB of weights) at 384 bytes a cell, so about 1574 cells.
    r, short = plan(path, "llama-server -c 32768 -np 2 -ts 1,1", "--gpu-memory", "1M,1M", expect=1)
    check(short["reason"] == "does_not_fit" and not short["fit"]["fits"], "not does_not_fit", r.out)
    check(short["fit"]["gpus"][0]["left"] < 0, "card 0 is not short", short["fit"]["gpus"])
    most = short["fit"]["max_context"]
    check(most == 1536, "max_context", short["fit"])
    # The largest context is the largest that fits: it fits, 256 more does not.
    _, at = plan(path, f"llama-server -c {most} -np 2 -ts 1,1", "--gpu-memory", "1M,1M")
    check(at["fit"]["fits"], f"-c {most} does not fit", at["fit"]["gpus"])
    plan(path, f"llama-server -c {most + 256} -np 2 -ts 1,1", "--gpu-memory", "1M,1M", expect=1)
    # --quiet: the one line that says why it failed (issue 43 item 9: it was exit 1 with nothing said).
    q = run([tool("hf-fetch"), "inspect", path, "--engine-args", "llama-server -c 32768 -np 2 -ts 1,1", "--gpu-memory",
             "1M,1M", "--quiet"], expect=1)
    check(q.out == "" and q.err.count("\n") == 1 and q.err.startswith("DOES NOT FIT")
          and "llama-server -c 32768: GPU 0 is" in q.err and f"the largest -c that fits: {most}" in q.err,
          "--quiet says why, in one line", q)
    # --print: the value alone, the exit status the verdict.
    p = run([tool("hf-fetch"), "inspect", path, "--engine-args", "llama-server -c 32768 -np 2", "--gpu-memory",
             "1M,1M", "--print", "max_context"], expect=1)
    check(p.out.strip() == str(most), "--print max_context", p.out)
    p = run([tool("hf-fetch"), "inspect", path, "--engine-args", "llama-server -c 4096", "--print", "kv_bytes"])
    check(p.out.strip() == str(4096 * 512), "--print kv_bytes without GPUs", p.out)
    run([tool("hf-fetch"), "inspect", path, "--engine-args", "llama-server", "--print", "gpus"], expect=2)
    run([tool("hf-fetch"), "inspect", path, "--engine-args", "llama-server", "--print", "max_context"], expect=2)
    # The fit domain says what is wrong with the line; hf-fetch says which flag gave it.
    p = run([tool("hf-fetch"), "inspect", path, "--engine-args", "llama-server -fa maybe"], expect=2)
    check("hf-fetch: --engine-args: -fa wants on, off or auto, not 'maybe'" in p.err, "-fa maybe", p.err)
    p = run([tool("hf-fetch"), "inspect", path, "--engine-args", "llama-server -ts 1,1,1", "--gpu-memory", "1M,1M"],
            expect=2)
    check("hf-fetch: --engine-args: -ts names 3 cards, but 2 are given" in p.err, "-ts 1,1,1 on two cards", p.err)


if __name__ == "__main__":
    main()
