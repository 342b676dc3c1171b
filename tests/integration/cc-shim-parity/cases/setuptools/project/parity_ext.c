/* A CPython extension module: what it computes, which glibc its headers were,
 * and that it calls into libc at run time. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *add(PyObject *self, PyObject *args) {
  long a, b;
  if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
  return PyLong_FromLong(a + b);
}

/* The glibc headers this was compiled against (zig can ship other ones). */
static PyObject *glibc_headers(PyObject *self, PyObject *unused) {
  return Py_BuildValue("(ii)", __GLIBC__, __GLIBC_MINOR__);
}

static PyObject *fp16_bits(PyObject *self, PyObject *args) {
  double x;
  uint16_t bits;
  if (!PyArg_ParseTuple(args, "d", &x)) return NULL;
  if (PyFloat_Pack2(x, (char *)&bits, 1) < 0) return NULL;
  return PyLong_FromLong(bits);
}

static int compare_longs(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* qsort and strlen from libc: the sorted digits of the decimal string s. */
static PyObject *sorted_digits(PyObject *self, PyObject *args) {
  const char *s;
  if (!PyArg_ParseTuple(args, "s", &s)) return NULL;
  size_t n = strlen(s);
  if (n > 64) n = 64;
  long digits[64];
  for (size_t i = 0; i < n; i++) digits[i] = s[i] - '0';
  qsort(digits, n, sizeof digits[0], compare_longs);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (list == NULL) return NULL;
  for (size_t i = 0; i < n; i++) PyList_SET_ITEM(list, (Py_ssize_t)i, PyLong_FromLong(digits[i]));
  return list;
}

static PyMethodDef methods[] = {
    {"add", add, METH_VARARGS, "a + b"},
    {"glibc_headers", glibc_headers, METH_NOARGS, "(__GLIBC__, __GLIBC_MINOR__) at compile time"},
    {"fp16_bits", fp16_bits, METH_VARARGS, "IEEE half bits of x"},
    {"sorted_digits", sorted_digits, METH_VARARGS, "the digits of s, sorted (qsort)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "parity_ext", NULL, -1, methods};

PyMODINIT_FUNC PyInit_parity_ext(void) { return PyModule_Create(&module); }
