"""examples/provision-box.sh end to end, offline: the Hub simulator serves the demo checkpoint, a wheelhouse
made here holds the engine's (tiny) wheel, the stand-in driver libraries of the envcheck tests play the GPU.
The happy path starts the stand-in engine; each gate made to fail stops the script with the tool's own
sentence and exit code, and the engine never starts.   usage: test_provision.py test_CASE..."""

import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "hf-fetch")]
from common import BIN, BUILD, SOURCE, HubSim, check, main, make_demo, tempdir  # noqa: E402
from hf_fixtures import clean_env  # noqa: E402

SCRIPT = os.path.join(SOURCE, "examples", "provision-box.sh")
FAKE = os.path.join(BUILD, "envcheck-fake-driver")
ENGINE = ("import os, glob, engine_stub; "
          "assert glob.glob(os.environ['HF_HUB_CACHE'] + '/models--provkit--demo-model/snapshots/*/config.json'); "
          "print('ENGINE STARTED', engine_stub.VERSION)")


def make_wheel(directory):
    """engine_stub-1.0-py3-none-any.whl with a correct RECORD; returns its sha256."""
    name = os.path.join(directory, "engine_stub-1.0-py3-none-any.whl")
    files = {
        "engine_stub/__init__.py": b"VERSION = '1.0'\n",
        "engine_stub-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: engine-stub\nVersion: 1.0\n",
        "engine_stub-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: provkit-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, data in files.items():
        import base64
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += "%s,sha256=%s,%d\n" % (path, h, len(data))
    record += "engine_stub-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(name, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
        z.writestr("engine_stub-1.0.dist-info/RECORD", record)
    return hashlib.sha256(open(name, "rb").read()).hexdigest()


def driver_file(tmp, cuda=12040, cc="8.9", driver="550.54.15"):
    path = os.path.join(tmp, "gpu-%d-%s.txt" % (cuda, cc))
    with open(path, "w") as f:
        f.write("driver_version=%s\ncuda_version=%d\n" % (driver, cuda))
        f.write("gpu.0.uuid=GPU-1a2b3c4d-1111-2222-3333-444455556666\ngpu.0.name=NVIDIA L40S\ngpu.0.cc=%s\n" % cc)
        f.write("gpu.0.memory_total=48318382080\ngpu.0.memory_free=47000000000\n")
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Box:
    def __init__(self):
        self.tmp = tempdir("provkit-provision-")
        make_demo(os.path.join(self.tmp, "hub"))
        self.manifest = os.path.join(self.tmp, "hub", "demo.manifest")
        self.wheelhouse = os.path.join(self.tmp, "wheelhouse")
        os.makedirs(self.wheelhouse)
        sha = make_wheel(self.wheelhouse)
        self.lock = os.path.join(self.tmp, "engine.lock")
        with open(self.lock, "w") as f:
            f.write("engine-stub==1.0 --hash=sha256:%s\n" % sha)

    def env(self, hub, **over):
        env = clean_env()
        env.update({
            "PATH": BIN + ":" + env["PATH"], "HOME": self.tmp,
            "MANIFEST": self.manifest, "LOCK": self.lock, "WHEELHOUSE": self.wheelhouse,
            "VENV": os.path.join(self.tmp, "venv"), "HF_HUB_CACHE": os.path.join(self.tmp, "cache"),
            "HF_ENDPOINT": hub, "HF_FETCH_OPTS": "--retries 1",
            "ENVBUILD_CACHE_DIR": os.path.join(self.tmp, "envbuild-cache"),
            "ENVCHECK_NVML_LIB": os.path.join(FAKE, "libnvidia-ml.so.1"),
            "ENVCHECK_CUDA_LIB": os.path.join(FAKE, "libcuda.so.1"),
            "PROVKIT_FAKE_GPU": driver_file(self.tmp),
        })
        env.update(over)
        return env

    def run(self, env):
        r = subprocess.run([SCRIPT, "--", "python", "-c", ENGINE], capture_output=True, text=True, env=env, timeout=120)
        print("--- exit %d\n--- stdout\n%s--- stderr\n%s" % (r.returncode, r.stdout, r.stderr))
        return r


def expect_stop(r, code, *sentences):
    check(r.returncode == code, "expected exit %d, got %d" % (code, r.returncode))
    check("ENGINE STARTED" not in r.stdout, "the engine started although a gate failed")
    out = r.stdout + r.stderr
    for s in sentences:
        check(s in out, "the tool's sentence %r is not in the output" % s)


@contextlib.contextmanager
def box_on_hub():
    """A fresh box and its environment, the Hub simulator serving the demo checkpoint."""
    box = Box()
    with HubSim(os.path.join(box.tmp, "hub", "repos.json")) as sim:
        yield box, box.env(sim.hub)


def test_happy():
    with box_on_hub() as (box, env):
        r = box.run(env)
        check(r.returncode == 0 and "ENGINE STARTED 1.0" in r.stdout, "the happy path did not start the engine")
        r = box.run(env)  # a second run finds everything in place and starts again
        check(r.returncode == 0 and "ENGINE STARTED 1.0" in r.stdout, "a second run did not start the engine")


def test_driver_too_old():
    with box_on_hub() as (box, env):
        env["PROVKIT_FAKE_GPU"] = driver_file(box.tmp, cuda=11080, driver="520.61.05")
        expect_stop(box.run(env), 1, "driver 520.61.05 supports CUDA 11.8, older than CUDA 12.4", "the box check failed (exit 1)")


def test_no_fp8():
    with box_on_hub() as (box, env):
        env["PROVKIT_FAKE_GPU"] = driver_file(box.tmp, cc="8.6")
        expect_stop(box.run(env), 1, "FAIL", "FP8", "the box check failed (exit 1)")


def test_disk_too_small():
    with box_on_hub() as (box, env):
        text = open(box.manifest).read()
        with open(box.manifest, "w") as f:  # an assembled output nobody has the disk for
            f.write(text.replace("    size: 614400", "    size: 999999999999999999"))
        check("999999999999999999" in open(box.manifest).read(), "the test could not edit the manifest")
        # The disk is hf-fetch's own gate on its plan (issue 43 item 11: the script sized it with awk).
        expect_stop(box.run(env), 1, "not enough space on the file system of", "fetching the checkpoint failed (exit 1)")
        script = open(SCRIPT).read()
        check("awk" not in script and "--disk" not in script, "the script sizes the disk itself")
        with open(os.path.join(SOURCE, "docs", "manifest.md")) as f:
            check("awk" not in f.read(), "docs/manifest.md sizes the disk with awk")


def test_hub_unreachable():
    with box_on_hub() as (box, env):
        env["HF_ENDPOINT"] = "http://127.0.0.1:%d" % free_port()
        expect_stop(box.run(env), 3, "fetching the checkpoint failed (exit 3)")


def test_upstream_changed():
    with box_on_hub() as (box, env):
        lines = open(box.manifest).read().splitlines(keepends=True)
        for i, line in enumerate(lines):
            if line.strip().startswith("git_oid:"):
                lines[i] = line.split("git_oid:")[0] + "git_oid: " + "0" * 40 + "\n"
                break
        with open(box.manifest, "w") as f:
            f.write("".join(lines))
        expect_stop(box.run(env), 1, "UPSTREAM CHANGED", "fetching the checkpoint failed (exit 1)")


def test_lock_mismatch():
    with box_on_hub() as (box, env):
        with open(box.lock, "w") as f:
            f.write("engine-stub==1.0 --hash=sha256:%s\n" % ("ab" * 32))
        expect_stop(box.run(env), 1, "envbuild:", "building the environment failed (exit 1)")


def test_verify_drift():
    with box_on_hub() as (box, env):
        r = box.run(env)
        check(r.returncode == 0, "the first run failed")
        site = subprocess.run([os.path.join(env["VENV"], "bin", "python"), "-c",
                               "import engine_stub, os; print(os.path.dirname(engine_stub.__file__))"],
                              capture_output=True, text=True).stdout.strip()
        with open(os.path.join(site, "patched.py"), "w") as f:  # a file no RECORD lists
            f.write("# dropped in by hand\n")
        expect_stop(box.run(env), 1, "unlisted", "verifying the environment failed (exit 1)")


def test_no_compiler_no_zig():
    with box_on_hub() as (box, env):
        env.update(CC="/nonexistent/cc", CC_SHIM_ZIG="/nonexistent/zig")
        r = box.run(env)
        expect_stop(r, 1, "installing cc-shim", "cc-shim: no zig found", "the compiler check (with cc-shim) failed (exit 1)")


def test_no_compiler_cc_shim():
    with box_on_hub() as (box, env):
        # No working compiler, but the npm zig (fixture cc-shim-zig): the script installs cc-shim first on
        # PATH, envcheck --cc then builds its test object through it, and the engine starts with CC=cc.
        zig = os.path.join(BUILD, "npm", "zig", "node_modules", "@ryoppippi", "zig-linux-x64", "zig")
        check(os.access(zig, os.X_OK), "zig is not installed at " + zig + " (fixture cc-shim-zig)")
        shim_dir = os.path.join(box.tmp, "shim-bin")
        env.update(CC="/nonexistent/cc", CC_SHIM_ZIG=zig, SHIM_DIR=shim_dir,
                   ZIG_GLOBAL_CACHE_DIR=os.path.join(BUILD, "tests", "cc-shim", "zig-cache"))
        r = box.run(env)
        check(r.returncode == 0 and "ENGINE STARTED 1.0" in r.stdout,
              "with cc-shim over zig the engine did not start\n" + r.stdout + r.stderr)
        check("installing cc-shim" in r.stdout + r.stderr, "the script did not say it installed cc-shim")
        check(os.path.realpath(os.path.join(shim_dir, "cc")) == os.path.realpath(os.path.join(BIN, "cc-shim")),
              "cc in SHIM_DIR is not a link to cc-shim")


if __name__ == "__main__":
    main()
