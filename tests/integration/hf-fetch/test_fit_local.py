"""hf-fetch inspect --engine-args ... --gpus local (issue 40 item 2): the cards are this box's, read as envcheck
reads them (NVML through dlopen, CUDA_VISIBLE_DEVICES honoured), total and free per card, so a card another
process half-fills counts as half. The driver is envcheck's stand-in libnvidia-ml (tests/integration/envcheck/
fake_nvml.c) loaded through ENVCHECK_NVML_LIB: the real code path, the facts from a description file.

Run one: python3 test_fit_local.py test_a_half_full_card_does_not_fit
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "envcheck"))
from common import check, main, run, tool  # noqa: E402
from checkpoints import tiny_llama_gguf  # noqa: E402
from envcheck_fixtures import HALF_FULL_BOX, MISSING, UUID_HALF, fake_gpu  # noqa: E402

MiB = 1 << 20
BOX = HALF_FULL_BOX
# -c 65536 over 2 slots: 65536 cells x 512 bytes = 32 MiB of KV, and about 0.6 MB of weights.
LINE = "llama-server -c 65536 -np 2"


def inspect(tmp, *more, env=None, expect=0):
    model = tiny_llama_gguf(os.path.join(tmp, "tiny.gguf"))
    e = dict(os.environ)
    e.pop("CUDA_VISIBLE_DEVICES", None)
    e.update({"ENVCHECK_NVML_LIB": MISSING + "/libnvidia-ml.so.1", "ENVCHECK_NVIDIA_SMI": MISSING + "/nvidia-smi"})
    e.update(env or {})
    r = run([tool("hf-fetch"), "inspect", model, "--engine-args", LINE, "--json", *more], expect=expect, env=e)
    return r, json.loads(r.out.splitlines()[-1])


def test_a_half_full_card_does_not_fit():
    with tempfile.TemporaryDirectory() as tmp:
        box = fake_gpu(tmp, BOX)
        # The empty card alone: fits.
        r, ok = inspect(tmp, "--gpus", "local", env={**box, "CUDA_VISIBLE_DEVICES": "0"})
        fit = ok["fit"]
        check(fit["fits"] and len(fit["gpus"]) == 1, "the empty card", fit)
        g = fit["gpus"][0]
        check(g["source"] == "local" and g["name"] == "NVIDIA GeForce RTX 5090" and g["total"] == 64 * MiB
              and g["free"] == 60 * MiB, "card 0's facts", g)
        check(g["left"] == g["free"] - g["weights_bytes"] - g["kv_bytes"] - g["recurrent_bytes"]
              and g["kv_bytes"] == 32 * MiB, "card 0's sum", g)
        check(fit["local_gpus"] == {"cards": 1, "cuda_visible_devices": "0", "none_why": None}, "local_gpus", fit)
        # The half-full card alone (the engine's GPU 0 is the driver's 1): 24 MiB free of 64 is short.
        r, short = inspect(tmp, "--gpus", "local", env={**box, "CUDA_VISIBLE_DEVICES": UUID_HALF}, expect=1)
        fit = short["fit"]
        g = fit["gpus"][0]
        check(short["reason"] == "does_not_fit" and not fit["fits"], "the half-full card fits", r)
        check(g["name"] == "NVIDIA GeForce RTX 3090" and g["free"] == 24 * MiB and g["left"] < 0, "card 1's row", g)
        check(0 < fit["max_context"] < 65536, "the largest -c that fits", fit)
        check("GPU 0 (local: NVIDIA GeForce RTX 3090, 24.0 MiB of 64.0 MiB free) is" in r.out + r.err, "names the card", r)
        # The same card by its total alone would fit: the free memory is what refused it.
        _, by_total = inspect(tmp, "--gpu-memory", "64M")
        check(by_total["fit"]["fits"], "64 MiB named fits", by_total["fit"])
        # Both cards: llama.cpp's default split follows each card's free memory, so card 0 takes the layers.
        r, both = inspect(tmp, "--gpus", "local", env=box)
        names = [g["name"] for g in both["fit"]["gpus"]]
        check(both["fit"]["fits"] and names == ["NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 3090"], "two cards",
              both["fit"])
        check(abs(both["fit"]["tensor_split"][0] - 60 / 84) < 1e-6, "split by free memory", both["fit"])
        text = run([tool("hf-fetch"), "inspect", os.path.join(tmp, "tiny.gguf"), "--engine-args", LINE, "--gpus",
                    "local"], env={**os.environ, **box})
        check("GPU 1 (local: NVIDIA GeForce RTX 3090, 24.0 MiB of 64.0 MiB free):" in text.out, "text rows", text.out)


def test_no_gpu_here_still_gives_the_figures():
    with tempfile.TemporaryDirectory() as tmp:
        r, bare = inspect(tmp, "--gpus", "local")
        fit = bare["fit"]
        check(bare["exit_code"] == 0 and fit["gpus"] == [] and fit["kv_bytes"] == 32 * MiB, "the figures alone", fit)
        check(fit["local_gpus"]["cards"] == 0 and fit["local_gpus"]["none_why"].startswith("no NVIDIA driver found"),
              "why no card", fit)
        # A driver that CUDA_VISIBLE_DEVICES leaves no card of: said, still exit 0.
        _, hidden = inspect(tmp, "--gpus", "local", env={**fake_gpu(tmp, BOX), "CUDA_VISIBLE_DEVICES": ""})
        check(hidden["fit"]["local_gpus"]["none_why"] == "CUDA_VISIBLE_DEVICES='' leaves the engine no GPU",
              "hidden", hidden["fit"])


def test_local_goes_with_engine_args_and_not_with_sizes():
    with tempfile.TemporaryDirectory() as tmp:
        model = tiny_llama_gguf(os.path.join(tmp, "tiny.gguf"))
        r = run([tool("hf-fetch"), "inspect", model, "--gpus", "local"], expect=2)
        check("--gpus local plans an engine's command line: it needs --engine-args" in r.err, "no --engine-args", r)
        r = run([tool("hf-fetch"), "inspect", model, "--engine-args", LINE, "--gpus", "local", "--gpu-memory", "24G"],
                expect=2)
        check("--gpu-memory names another box's" in r.err, "both", r)
        r = run([tool("hf-fetch"), "inspect", model, "--gpus", "several"], expect=2)
        check("--gpus" in r.err, "a word other than local", r)


if __name__ == "__main__":
    main()
