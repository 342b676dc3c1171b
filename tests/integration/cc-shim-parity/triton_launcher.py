"""Triton's launcher build, reproduced for the gcc-parity suite (cases/triton-*).

The compile command is the one `_build` in triton/runtime/build.py puts
together, as upstream main and as triton-cpu write it (read from their
sources, reproduced here): main runs
    CC SRC -O3 -shared -fPIC -Wno-psabi -o SO -l:libcuda.so.1 -L<dirs> -I<dirs>
and triton-cpu adds "-lgcc" after the libraries and "-Wl,-rpath", DIR (two
arguments) for every library dir. Flavour "lcuda" is main as it was until
November 2025 (triton-lang/triton#8668), and so in the releases before: the
driver's library list was ['cuda'], giving -lcuda. Otherwise the libraries and
directories are those of
third_party/nvidia/backend/driver.py: ['libcuda.so.1'], [<backend>/lib,
*libcuda_dirs()] and [<backend>/include], where libcuda_dirs() is
TRITON_LIBCUDA_PATH, else the directories of the `ldconfig -p` lines naming
libcuda.so.1, in their order. As Triton does, the source is written to one
temporary directory and built into another, stdout goes to /dev/null.
triton-cpu's build.py appends "gcc" to the list it is given, in place, and
that list is driver.py's module-level `libraries`; the launcher is the second
module built in a process (after cuda_utils), so its command has -lgcc twice.

The launcher source is a reduced one written for this test, in the shape of
the launcher Triton generates per kernel signature: cuda.h, dlfcn.h, Python.h,
a Python object holding an _Alignas(128) CUtensorMap, a driver entry point
looked up with dlopen/dlsym, fp16 arguments packed by PyFloat_Pack2 through an
`unsigned char *` (gcc is silent on that by default, clang warns), argument
parsing with PyArg_ParseTuple, a launch-enter hook, a module definition.

Usage:
  triton_launcher.py build --flavour main|cpu|lcuda --cc CC --backend DIR
                           (--libcuda-path DIR | --ldconfig FILE) --out DIR
      writes OUT/argv (one argument a line), OUT/rc, OUT/stderr and, when the
      compiler succeeded, OUT/__triton_launcher<EXT_SUFFIX>.
  triton_launcher.py load SO
      imports SO as Triton does (importlib, from its path) and prints what
      its functions return.
"""

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

NAME = "__triton_launcher"

# Stand-in for the few declarations of the CUDA driver API header that the
# launcher below uses (Triton ships the real one in backends/nvidia/include).
CUDA_H = r"""#ifndef PARITY_CUDA_H
#define PARITY_CUDA_H
typedef int CUresult;
#define CUDA_SUCCESS 0
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUfunc_st *CUfunction;
typedef struct CUtensorMap_st {
  _Alignas(64) unsigned long long opaque[16];
} CUtensorMap;
CUresult cuInit(unsigned int flags);
#endif
"""

LAUNCHER_C = r"""
#include "cuda.h"
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
  PyObject_HEAD;
  _Alignas(128) CUtensorMap tensorMap;
} PyCUtensorMapObject;

static inline void gpuAssert(CUresult code, const char *file, int line) {
  if (code != CUDA_SUCCESS) {
    char err[1024] = {0};
    snprintf(err, sizeof err, "Triton Error [CUDA]: %d at %s:%d", code, file, line);
    PyGILState_STATE gil_state = PyGILState_Ensure();
    PyErr_SetString(PyExc_RuntimeError, err);
    PyGILState_Release(gil_state);
  }
}

#define CUDA_CHECK(ans) { gpuAssert((ans), __FILE__, __LINE__); }

/* The stand-in driver has cuInit only; Triton looks up cuLaunchKernelEx the same way. */
typedef CUresult (*cuInit_t)(unsigned int flags);

static cuInit_t getEntryPointHandle(void) {
  void *handle = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!handle) {
    PyErr_SetString(PyExc_RuntimeError, "Failed to open libcuda.so.1");
    return NULL;
  }
  dlerror();
  cuInit_t fn = (cuInit_t)dlsym(handle, "cuInit");
  const char *err = dlerror();
  if (err) {
    PyErr_SetString(PyExc_RuntimeError, "Failed to retrieve cuInit from libcuda.so.1");
    dlclose(handle);
    return NULL;
  }
  return fn;
}

static uint16_t pack_fp16(double f) {
  uint16_t result;
#if 0x030600B1 <= PY_VERSION_HEX && PY_VERSION_HEX <= 0x030B00A1 && !defined(PYPY_VERSION)
  _PyFloat_Pack2(f, (unsigned char*)&result, 1);
#else
  PyFloat_Pack2(f, (unsigned char*)&result, 1);
#endif
  return result;
}

static uint16_t pack_bf16(double f) {
  float f32 = (float)f;
  uint32_t u32 = *(uint32_t*)&f32;
  return (uint16_t)(u32 >> 16);
}

static PyObject* launch(PyObject* self, PyObject* args) {
  int gridX, gridY, gridZ;
  uint64_t _stream;
  uint64_t _function;
  PyObject *kernel_metadata = NULL;
  PyObject *launch_metadata = NULL;
  PyObject *launch_enter_hook = NULL;
  double _arg0;
  double _arg1;
  int32_t _arg2;
  if (!PyArg_ParseTuple(args, "iiiKKOOOddi", &gridX, &gridY, &gridZ, &_stream, &_function,
                        &kernel_metadata, &launch_metadata, &launch_enter_hook, &_arg0, &_arg1, &_arg2)) {
    return NULL;
  }
  int num_warps, num_ctas, shared_memory;
  if (!PyArg_ParseTuple(kernel_metadata, "iii", &num_warps, &num_ctas, &shared_memory)) {
    PyErr_SetString(PyExc_TypeError, "kernel_metadata must be a tuple");
    return NULL;
  }
  PyObject *hook_result = Py_None;
  Py_INCREF(hook_result);
  if (launch_enter_hook != Py_None) {
    Py_DECREF(hook_result);
    hook_result = PyObject_CallOneArg(launch_enter_hook, launch_metadata);
    if (!hook_result)
      return NULL;
  }
  CUresult linked = cuInit((unsigned)gridX);
  CUDA_CHECK(linked == 42 + gridX ? CUDA_SUCCESS : linked);
  cuInit_t entry = getEntryPointHandle();
  if (entry == NULL) {
    Py_DECREF(hook_result);
    return NULL;
  }
  CUresult looked_up = entry((unsigned)(gridY * gridZ));
  uint16_t _arg0_storage = pack_fp16(_arg0);
  uint16_t _arg1_storage = pack_bf16(_arg1);
  if (PyErr_Occurred()) {
    Py_DECREF(hook_result);
    return NULL;
  }
  return Py_BuildValue("(iiiiiiN)", (int)linked, (int)looked_up, (int)_arg0_storage, (int)_arg1_storage,
                       (int)_arg2 * num_warps, num_ctas + shared_memory, hook_result);
}

static PyObject* tensor_map_layout(PyObject* self, PyObject* unused) {
  return Py_BuildValue("(nnn)", (Py_ssize_t)sizeof(PyCUtensorMapObject),
                       (Py_ssize_t)offsetof(PyCUtensorMapObject, tensorMap),
                       (Py_ssize_t)_Alignof(PyCUtensorMapObject));
}

static PyMethodDef ModuleMethods[] = {
  {"launch", launch, METH_VARARGS, "Entry point for all kernels with this signature"},
  {"tensor_map_layout", tensor_map_layout, METH_NOARGS, "size, offset and alignment of the tensor map object"},
  {NULL, NULL, 0, NULL} // sentinel
};

static struct PyModuleDef ModuleDef = {
  PyModuleDef_HEAD_INIT,
  "__triton_launcher",
  NULL, //documentation
  -1, //size
  ModuleMethods
};

PyMODINIT_FUNC PyInit___triton_launcher(void) {
  PyObject *m = PyModule_Create(&ModuleDef);
  if (m == NULL) {
    return NULL;
  }
  PyModule_AddFunctions(m, ModuleMethods);
  return m;
}
"""


def library_flag(lib):
    # build.py's _library_flag: an exact file name (libcuda.so.1) becomes -l:NAME.
    if re.search(r"\.so(\.\d+)*$", lib) or lib.endswith(".a"):
        return f"-l:{lib}"
    return f"-l{lib}"


def python_include_dir():
    scheme = sysconfig.get_default_scheme()
    if scheme == "posix_local":  # Debian's scheme; build.py uses posix_prefix then
        scheme = "posix_prefix"
    return sysconfig.get_paths(scheme=scheme)["include"]


def compile_command(flavour, cc, src, srcdir, library_dirs, include_dirs, libraries, ccflags):
    so = os.path.join(srcdir, NAME + sysconfig.get_config_var("EXT_SUFFIX"))
    backend_dirs = {p for p in (os.environ.get("TRITON_CUDACRT_PATH"), os.environ.get("TRITON_CUDART_PATH")) if p}
    include_dirs = include_dirs + [srcdir, python_include_dir(), *backend_dirs]
    cc_cmd = [cc, src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", so]
    if flavour == "cpu":
        libraries += ["gcc"]  # in place, as triton-cpu's build.py does
    cc_cmd += [library_flag(lib) for lib in libraries]
    cc_cmd += [f"-L{d}" for d in library_dirs]
    cc_cmd += [f"-I{d}" for d in include_dirs if d is not None]
    if flavour == "cpu":
        for d in library_dirs:
            cc_cmd.extend(["-Wl,-rpath", d])
    cc_cmd.extend(ccflags)
    return cc_cmd, so


def libcuda_dirs(libcuda_path, ldconfig_file):
    if libcuda_path:
        return [libcuda_path]
    with open(ldconfig_file, encoding="utf-8") as f:
        libs = f.read()
    locs = [line.split()[-1] for line in libs.splitlines() if "libcuda.so.1" in line]
    return [os.path.dirname(loc) for loc in locs]


def build(args):
    backend = args.backend
    os.makedirs(os.path.join(backend, "include"), exist_ok=True)
    os.makedirs(os.path.join(backend, "lib"), exist_ok=True)
    with open(os.path.join(backend, "include", "cuda.h"), "w", encoding="utf-8") as f:
        f.write(CUDA_H)
    library_dirs = [os.path.join(backend, "lib"), *libcuda_dirs(args.libcuda_path, args.ldconfig)]
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.out) as srcdir:
        src = os.path.join(srcdir, NAME + ".c")
        with open(src, "w", encoding="utf-8") as f:
            f.write(LAUNCHER_C)
        include_dirs = [os.path.join(backend, "include")]
        libraries = ["cuda" if args.flavour == "lcuda" else "libcuda.so.1"]  # driver.py's module-level list
        # cuda_utils is built first, with the same list (its command is not run here).
        compile_command(args.flavour, args.cc, src, args.out, library_dirs, include_dirs, libraries, [])
        cmd, so = compile_command(args.flavour, args.cc, src, args.out, library_dirs, include_dirs, libraries, [])
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(os.path.join(args.out, "argv"), "w", encoding="utf-8") as f:
        f.write("\n".join(cmd) + "\n")
    with open(os.path.join(args.out, "rc"), "w", encoding="utf-8") as f:
        f.write(f"{proc.returncode}\n")
    with open(os.path.join(args.out, "stderr"), "wb") as f:
        f.write(proc.stderr)
    if proc.returncode == 0 and not os.path.isfile(so):
        sys.exit(f"the compiler exited 0 but wrote no {so}")


def load(args):
    spec = importlib.util.spec_from_file_location(NAME, args.so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    seen = []
    result = mod.launch(3, 2, 4, 0, 0, (4, 1, 1024), {"name": "kernel"},
                        lambda meta: seen.append(meta["name"]) or len(seen), 1.5, -2.25, 7)
    print("launch:", result)
    print("hook saw:", seen)
    print("tensor map layout:", mod.tensor_map_layout())
    print("names:", sorted(n for n in dir(mod) if not n.startswith("__")))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--flavour", choices=["main", "cpu", "lcuda"], required=True)
    b.add_argument("--cc", required=True)
    b.add_argument("--backend", required=True)
    where = b.add_mutually_exclusive_group(required=True)
    where.add_argument("--libcuda-path")
    where.add_argument("--ldconfig")
    b.add_argument("--out", required=True)
    b.set_defaults(run=build)
    ld = sub.add_parser("load")
    ld.add_argument("so")
    ld.set_defaults(run=load)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
