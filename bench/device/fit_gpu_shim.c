// LD_PRELOAD library for bench/device/fit-gpu.sh (issue 40 item 7): like tests/llamacpp/cache_shim.c it wraps
// ggml_backend_alloc_ctx_tensors_from_buft, through which llama.cpp allocates its weights (on a GPU) and its KV
// and recurrent caches, but it lets the run go on (the compute buffers come after) and writes, to the file
// $PROVKIT_CACHE_LOG:
//   provkit-cache NAME BYTES        each cache tensor's exact ggml_nbytes
//   provkit-buffer KIND BUFNAME BYTES  each buffer so allocated (KIND cache or other), its exact size (the log
//                                      prints MiB with 2 decimals)
// The tiny GGUFs of tests/llamacpp/make_gguf.py have no tokenizer: llama.cpp would abort when it tokenizes the
// prompt, after every buffer is allocated, and its log thread could lose the last lines (the compute buffers).
// llama_tokenize is wrapped instead: it waits for the log to drain and ends the process (exit 0).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ggml_context;
struct ggml_tensor;
typedef void* buffer_type;
typedef void* buffer;

typedef buffer (*alloc_fn)(struct ggml_context*, buffer_type);
typedef struct ggml_tensor* (*first_fn)(const struct ggml_context*);
typedef struct ggml_tensor* (*next_fn)(const struct ggml_context*, struct ggml_tensor*);
typedef const char* (*name_fn)(const struct ggml_tensor*);
typedef size_t (*nbytes_fn)(const struct ggml_tensor*);
typedef const char* (*buf_name_fn)(buffer);
typedef size_t (*buf_size_fn)(buffer);

static void* must(const char* name, void* handle) {
  void* f = dlsym(handle, name);
  if (!f) {
    fprintf(stderr, "provkit-cache: %s not found\n", name);
    _exit(99);
  }
  return f;
}

static FILE* out(void) {
  static FILE* f;
  if (!f) {
    const char* path = getenv("PROVKIT_CACHE_LOG");
    f = path ? fopen(path, "w") : NULL;
    if (!f) f = stderr;
  }
  return f;
}

buffer ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context* ctx, buffer_type buft) {
  alloc_fn real = (alloc_fn)must("ggml_backend_alloc_ctx_tensors_from_buft", RTLD_NEXT);
  first_fn first = (first_fn)must("ggml_get_first_tensor", RTLD_DEFAULT);
  next_fn next = (next_fn)must("ggml_get_next_tensor", RTLD_DEFAULT);
  name_fn name = (name_fn)must("ggml_get_name", RTLD_DEFAULT);
  nbytes_fn nbytes = (nbytes_fn)must("ggml_nbytes", RTLD_DEFAULT);
  buf_name_fn buf_name = (buf_name_fn)must("ggml_backend_buffer_name", RTLD_DEFAULT);
  buf_size_fn buf_size = (buf_size_fn)must("ggml_backend_buffer_get_size", RTLD_DEFAULT);
  int cache = 0;
  for (struct ggml_tensor* t = first(ctx); t; t = next(ctx, t)) {
    const char* n = name(t);
    // per-stream views (" (view)") share the tensor's memory: only the tensors themselves count
    if (strncmp(n, "cache_", 6) == 0 && !strchr(n, ' ')) {
      fprintf(out(), "provkit-cache %s %zu\n", n, nbytes(t));
      cache = 1;
    }
  }
  buffer b = real(ctx, buft);
  if (b) fprintf(out(), "provkit-buffer %s %s %zu\n", cache ? "cache" : "other", buf_name(b), buf_size(b));
  fflush(out());
  return b;
}

int llama_tokenize(const void* vocab, const char* text, int len, void* tokens, int n_max, int add_special,
                   int parse_special) {
  (void)vocab, (void)text, (void)len, (void)tokens, (void)n_max, (void)add_special, (void)parse_special;
  fprintf(out(), "provkit-cache tokenize\n");
  fflush(out());
  fflush(stderr);
  usleep(1000 * 1000);
  _exit(0);
}
