// LD_PRELOAD library for the fit planner's judge: llama.cpp allocates each
// KV/recurrent cache through ggml_backend_alloc_ctx_tensors_from_buft; this
// wraps it and writes every cache tensor's exact ggml_nbytes as lines
// "provkit-cache NAME BYTES" to the file $PROVKIT_CACHE_LOG (its own file:
// llama.cpp's log thread writes stderr in pieces, between which a line of
// ours could land). The scheduler is made after the caches: the
// process ends there (exit 0), so a run costs the load and nothing more.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ggml_context;
struct ggml_tensor;
typedef void* buffer_type;

typedef void* (*alloc_fn)(struct ggml_context*, buffer_type);
typedef struct ggml_tensor* (*first_fn)(const struct ggml_context*);
typedef struct ggml_tensor* (*next_fn)(const struct ggml_context*, struct ggml_tensor*);
typedef const char* (*name_fn)(const struct ggml_tensor*);
typedef size_t (*nbytes_fn)(const struct ggml_tensor*);

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

void* ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context* ctx, buffer_type buft) {
  alloc_fn real = (alloc_fn)must("ggml_backend_alloc_ctx_tensors_from_buft", RTLD_NEXT);
  first_fn first = (first_fn)must("ggml_get_first_tensor", RTLD_DEFAULT);
  next_fn next = (next_fn)must("ggml_get_next_tensor", RTLD_DEFAULT);
  name_fn name = (name_fn)must("ggml_get_name", RTLD_DEFAULT);
  nbytes_fn nbytes = (nbytes_fn)must("ggml_nbytes", RTLD_DEFAULT);
  for (struct ggml_tensor* t = first(ctx); t; t = next(ctx, t)) {
    const char* n = name(t);
    // per-stream views (" (view)") share the tensor's memory: only the tensors themselves count
    if (strncmp(n, "cache_", 6) == 0 && !strchr(n, ' ')) fprintf(out(), "provkit-cache %s %zu\n", n, nbytes(t));
  }
  return real(ctx, buft);
}

// llama.cpp logs through a worker thread, which its static destructors stop: a refusal's sentence
// can be lost when the tool returns from main at once. A pause registered after those destructors
// (so run before them) lets it reach stderr.
static void pause_for_the_log(void) { usleep(300 * 1000); }

void llama_backend_init(void) {
  void (*real)(void) = (void (*)(void))must("llama_backend_init", RTLD_NEXT);
  atexit(pause_for_the_log);
  real();
}

void* ggml_backend_sched_new(void* a, void* b, int c, size_t d, int e, int f) {
  (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
  fprintf(out(), "provkit-cache end\n");
  fflush(out());
  _exit(0);
}
