"""llama.cpp as the fit planner's judge: Debian unstable's llama.cpp in a private sysroot
(fetch-judge.sh), an LD_PRELOAD shim (cache_shim.c) printing each cache tensor's bytes, and
tiny GGUFs (make_gguf.py). Standard library only: gguf-py runs in Debian's python3."""

import os
import shlex
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


class Judge:
    def __init__(self, cache_dir):
        """Fetches the packages (once: cached in cache_dir) and builds the shim; raises on failure."""
        self.dir = cache_dir
        os.makedirs(cache_dir, exist_ok=True)
        fetched = subprocess.run(["sh", os.path.join(HERE, "fetch-judge.sh"), cache_dir],
                                 capture_output=True, text=True)
        if fetched.returncode != 0:
            raise RuntimeError("cannot fetch llama.cpp from Debian unstable: " + fetched.stderr[-2000:])
        self.root = os.path.join(cache_dir, "root")
        self.lib = os.path.join(self.root, "usr", "lib", "x86_64-linux-gnu")
        self.shim = os.path.join(cache_dir, "cache_shim.so")
        source = os.path.join(HERE, "cache_shim.c")
        if not os.path.exists(self.shim) or os.path.getmtime(self.shim) < os.path.getmtime(source):
            subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", self.shim, source], check=True)

    def make_model(self, family, out, max_tensors=0):
        """A tiny random-weight GGUF of `family` (make_gguf.py), written by Debian's gguf-py; with `max_tensors`,
        a gguf-split set beside `out` (OUT-00001-of-0000N.gguf, ...), and `out` is made by nobody."""
        if max_tensors:
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_gguf.py"), family, out, str(max_tensors)],
                           env=self.gguf_env(), check=True, capture_output=True)
            return out
        if not os.path.exists(out):
            env = self.gguf_env()
            # A temporary of this process's own: the tests run side by side and may make the same model at once
            # (the same bytes: whichever rename lands last wins).
            part = f"{out}.part-{os.getpid()}"
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_gguf.py"), family, part],
                           env=env, check=True, capture_output=True)
            os.replace(part, out)
        return out

    def gguf_env(self):
        """The environment gguf-py runs in: Debian's python3-gguf from the sysroot."""
        paths = [os.path.join(self.root, "usr", "lib", "python3", "dist-packages")]
        env = dict(os.environ)
        pyroot = os.path.join(self.dir, "pyroot")
        if os.path.isdir(pyroot):  # bookworm's numpy, fetched when Debian 12's python3 has none
            paths.append(os.path.join(pyroot, "usr", "lib", "python3", "dist-packages"))
            lib = os.path.join(pyroot, "usr", "lib", "x86_64-linux-gnu")
            env["LD_LIBRARY_PATH"] = ":".join([lib, os.path.join(lib, "blas"), os.path.join(lib, "lapack")])
        env["PYTHONPATH"] = ":".join(paths)
        return env

    def allocate(self, model, engine_args):
        """Runs the engine's command line (its first word the tool) on `model`; returns
        ({cache tensor: bytes}, None) or (None, the engine's error lines) when it refuses."""
        words = shlex.split(engine_args)
        tool, args = words[0], words[1:]
        cmd = [os.path.join(self.lib, "ld-linux-x86-64.so.2"), "--library-path",
               self.lib + ":" + os.path.join(self.lib, "llama"), os.path.join(self.root, "usr", "bin", tool),
               "-m", model, "-fit", "off", "-t", "1", "--no-warmup"] + args
        if tool != "llama-server":
            cmd += ["-n", "1", "-p", "hi"]
        log = os.path.join(self.dir, "cache-%d.log" % os.getpid())
        if os.path.exists(log):
            os.unlink(log)
        env = {"LD_PRELOAD": self.shim, "PROVKIT_CACHE_LOG": log, "PATH": "/usr/bin:/bin", "HOME": self.dir}
        # ggml finds its CPU backends in the working directory
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120,
                           cwd=os.path.join(self.lib, "ggml", "backends0"), stdin=subprocess.DEVNULL)
        tensors, ended = {}, False
        lines = []
        if os.path.exists(log):
            with open(log) as f:
                lines = f.read().splitlines()
            os.unlink(log)
        for line in lines:
            if line.startswith("provkit-cache "):
                parts = line.split()
                if parts[1] == "end":
                    ended = True
                else:
                    tensors[parts[1]] = int(parts[2])
        if ended and p.returncode == 0:
            return tensors, None
        said = [l for l in p.stderr.splitlines() if " E " in l or "error" in l.lower()]
        return None, "\n".join(said or p.stderr.splitlines()[-5:] or ["exit %d" % p.returncode])[-3000:]
