/* Stand-in libnccl.so.2 for envcheck's NCCL test: the calls envcheck makes (ncclGetVersion, ncclCommInitAll,
 * ncclGroupStart/End, ncclAllReduce, ncclCommDestroy/Abort, ncclGetErrorString), over the stand-in libcuda's
 * "device" memory, which is host memory: an all-reduce really sums the ranks' bf16 buffers (as float, rounded
 * back), so its time grows with the size as a real one does. At ncclCommInitAll it writes an INFO log, as
 * NCCL does, to $NCCL_DEBUG_FILE when NCCL_DEBUG=INFO: the variables it read and a ring's transport per channel.
 *
 * PROVKIT_FAKE_NCCL picks a behaviour: "normal" (default; P2P between every pair), "shm" (P2P disabled, the
 * ring over SHM, with NCCL's own warning), "net" (the ring over NET/Socket), "init-fails" (ncclCommInitAll
 * returns ncclSystemError), "hang" (ncclCommInitAll never returns), "hang-allreduce" (the first all-reduce
 * never returns), "wrong-sum" (the last element of every sum is one too many). PROVKIT_FAKE_NCCL_DELAY_US adds that many
 * microseconds to every ncclAllReduce. PROVKIT_FAKE_NCCL_RECORD names a file where the library writes the
 * NCCL_NVLS_ENABLE it saw ("NCCL_NVLS_ENABLE=0"), for the tests to read apart from envcheck's own parse. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int ncclResult_t; /* 0 success, 2 system error, 4 invalid argument */
typedef struct ncclComm {
  int rank, ranks, device, released;
  struct ncclComm* all; /* the ranks of one ncclCommInitAll */
} * ncclComm_t;

#define MAX_RANKS 16

static struct pending {
  const uint16_t* send;
  uint16_t* recv;
  size_t count;
  ncclComm_t comm;
} pending[MAX_RANKS];
static int pending_count, group_depth;

static const char* mode(void) {
  const char* m = getenv("PROVKIT_FAKE_NCCL");
  return m && *m ? m : "normal";
}

ncclResult_t ncclGetVersion(int* version) {
  if (!version) return 4;
  *version = 22105;
  return 0;
}

const char* ncclGetErrorString(ncclResult_t rc) {
  switch (rc) {
    case 0: return "no error";
    case 2: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case 4: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    default: return "unknown result code";
  }
}

static void write_log(int ranks, const int* devlist) {
  const char* level = getenv("NCCL_DEBUG");
  const char* file = getenv("NCCL_DEBUG_FILE");
  const char* nvls = getenv("NCCL_NVLS_ENABLE");
  const char* record = getenv("PROVKIT_FAKE_NCCL_RECORD");
  if (record) {
    FILE* r = fopen(record, "w");
    if (r) {
      fprintf(r, "NCCL_NVLS_ENABLE=%s\n", nvls ? nvls : "(unset)");
      fclose(r);
    }
  }
  if (!level || strcmp(level, "INFO") != 0) return;
  FILE* f = file ? fopen(file, "a") : stdout;
  if (!f) return;
  int pid = (int)getpid();
  fprintf(f, "box:%d:%d [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", pid, pid);
  if (nvls) fprintf(f, "box:%d:%d [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to %s.\n", pid, pid, nvls);
  const char* via = "P2P/CUMEM/read";
  if (strcmp(mode(), "shm") == 0) {
    via = "SHM/direct/direct";
    fprintf(f, "box:%d:%d [0] NCCL INFO P2P is disabled between connected GPUs %d and %d\n", pid, pid, devlist[0],
            ranks > 1 ? devlist[1] : devlist[0]);
  } else if (strcmp(mode(), "net") == 0) {
    via = "NET/Socket/0";
  }
  for (int channel = 0; channel < 2; ++channel)
    for (int r = 0; r < ranks && ranks > 1; ++r)
      fprintf(f, "box:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via %s\n", pid, pid, devlist[r], channel,
              r, devlist[r], (r + 1) % ranks, devlist[(r + 1) % ranks], via);
  fprintf(f, "box:%d:%d [0] NCCL INFO Connected all rings\n", pid, pid);
  if (f != stdout) fclose(f);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (!comms || ndev < 1 || ndev > MAX_RANKS || !devlist) return 4;
  write_log(ndev, devlist);
  if (strcmp(mode(), "init-fails") == 0) return 2;
  if (strcmp(mode(), "hang") == 0)
    for (;;) pause();
  ncclComm_t all = calloc((size_t)ndev, sizeof *all);
  if (!all) return 2;
  for (int i = 0; i < ndev; ++i) {
    all[i].rank = i;
    all[i].ranks = ndev;
    all[i].device = devlist[i];
    all[i].all = all;
    comms[i] = &all[i];
  }
  return 0;
}

static float from_bf16(uint16_t v) {
  uint32_t bits = (uint32_t)v << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
static uint16_t to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  bits += 0x7fff + ((bits >> 16) & 1); /* round to nearest even */
  return (uint16_t)(bits >> 16);
}

static void reduce_group(void) {
  /* Every rank's buffers are in this process: sum element by element over the ranks, into each receive buffer. */
  if (pending_count == 0) return;
  if (strcmp(mode(), "hang-allreduce") == 0)
    for (;;) pause();
  size_t count = pending[0].count;
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int r = 0; r < pending_count; ++r) sum += from_bf16(pending[r].send[i]);
    if (strcmp(mode(), "wrong-sum") == 0 && i == count - 1) sum += 1; /* a broken reduction in its last element */
    uint16_t v = to_bf16(sum);
    for (int r = 0; r < pending_count; ++r) pending[r].recv[i] = v;
  }
  const char* delay = getenv("PROVKIT_FAKE_NCCL_DELAY_US");
  if (delay) {
    long us = atol(delay);
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
  }
  pending_count = 0;
}

ncclResult_t ncclGroupStart(void) {
  ++group_depth;
  return 0;
}

ncclResult_t ncclGroupEnd(void) {
  if (group_depth == 0) return 4;
  if (--group_depth == 0) reduce_group();
  return 0;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, int datatype, int op, ncclComm_t comm,
                           void* stream) {
  (void)stream;
  if (!comm || !send || !recv || datatype != 9 /* ncclBfloat16 */ || op != 0 /* ncclSum */) return 4;
  if (pending_count >= MAX_RANKS || (pending_count > 0 && pending[0].count != count)) return 4;
  pending[pending_count++] = (struct pending){send, recv, count, comm};
  if (group_depth == 0) reduce_group(); /* one rank alone outside a group: its own sum */
  return 0;
}

static ncclResult_t release(ncclComm_t comm) {
  if (!comm || comm->released) return 4;
  comm->released = 1;
  /* The ranks' array goes with the last of them. */
  for (int i = 0; i < comm->ranks; ++i)
    if (!comm->all[i].released) return 0;
  free(comm->all);
  return 0;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) { return release(comm); }
ncclResult_t ncclCommAbort(ncclComm_t comm) { return release(comm); }
