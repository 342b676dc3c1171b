/* A stand-in NVIDIA driver for envcheck's tests: both stand-in libraries
 * answer from the description file named by $PROVKIT_FAKE_GPU, key=value
 * lines ('#' comments):
 *   driver_version=580.65.06       nvmlSystemGetDriverVersion
 *   cuda_version=13000             nvmlSystemGetCudaDriverVersion_v2
 *   libcuda_version=13000          cuDriverGetVersion (default: cuda_version)
 *   nvml_init=0                    what nvmlInit_v2 returns
 *   nvml_init_ms=0                 how long nvmlInit_v2 takes (a real driver: 0.1-0.25 s)
 *   gpu.N.uuid= gpu.N.name= gpu.N.cc=12.0 gpu.N.memory_total= gpu.N.memory_free=
 *   gpu.N.pcie_gen=CUR,MAX  gpu.N.pcie_width=CUR,MAX
 *   p2p.A.B=STATUS  nvlink.A.B=STATUS  (nvmlGpuP2PStatus_t; default 5, not supported)
 *   gpu.N.pci_bus_id=0000:01:00.0  (default 0000:0M:00.0, M = N+1)
 *   gpu.N.pcie_load=GEN,WIDTH      what NVML's current link reads while a
 *                                  stand-in libcuda copy runs (default: as idle)
 *   cuda_peer.A.B=1                cuDeviceCanAccessPeer allows A<->B (default refused)
 *   gpu.N.mig_mode=1               nvmlDeviceGetMigMode's current mode (default 0)
 *   gpu.N.mig.K.uuid=MIG-...       a MIG instance in slot K (nvmlDeviceGetMigDeviceHandleByIndex;
 *   gpu.N.mig.K.name= .gi=1 .ci=0  empty slots answer NOT_FOUND), its name, GPU/compute instance
 *   gpu.N.mig.K.memory_total= .memory_free=   ids and memory
 *   gpu.N.process.K=PID,BYTES[,graphics|both][,GI,CI]
 *                                  a process holding memory (nvmlDevice{Compute,Graphics}RunningProcesses_v3,
 *                                  _v2): BYTES "na" is NVML_VALUE_NOT_AVAILABLE; default compute only;
 *                                  GI,CI its MIG instance (default none, 0xFFFFFFFF)
 * The real driver cannot exist on the test hosts; this goes through the same
 * dlopen/dlsym path envcheck uses on a real one. */
#ifndef FAKE_GPU_DESC_H
#define FAKE_GPU_DESC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_GPUS 16
#define FAKE_MAX_MIGS 7 /* what an A100/H100 offers: 7 slots */
#define FAKE_MAX_PROCESSES 16

struct fake_process {
  unsigned pid; /* 0: an empty slot */
  unsigned long long memory;
  int compute, graphics;
  unsigned gi, ci;
};

struct fake_gpu {
  char uuid[96];
  char name[96];
  int cc_major, cc_minor;
  unsigned long long memory_total, memory_free;
  unsigned gen_cur, gen_max, width_cur, width_max;
  unsigned gen_load, width_load;
  char pci_bus_id[32];
  int mig_mode;
  /* A MIG instance is a fake_gpu too (NVML hands out device handles for both): */
  int is_mig, parent, gi, ci;
  struct fake_process processes[FAKE_MAX_PROCESSES];
};

struct fake_desc {
  char driver_version[80];
  int cuda_version;
  int libcuda_version;
  int nvml_init;
  int nvml_init_ms;
  int gpu_count;
  struct fake_gpu gpus[FAKE_MAX_GPUS];
  int p2p[FAKE_MAX_GPUS][FAKE_MAX_GPUS];
  int nvlink[FAKE_MAX_GPUS][FAKE_MAX_GPUS];
  int cuda_peer[FAKE_MAX_GPUS][FAKE_MAX_GPUS];
  struct fake_gpu migs[FAKE_MAX_GPUS][FAKE_MAX_MIGS]; /* uuid[0] == 0: an empty slot */
};

/* Returns 0 when the description was read. */
static int fake_desc_load(struct fake_desc* d) {
  memset(d, 0, sizeof *d);
  d->libcuda_version = -1;
  for (int a = 0; a < FAKE_MAX_GPUS; ++a)
    for (int b = 0; b < FAKE_MAX_GPUS; ++b) d->p2p[a][b] = d->nvlink[a][b] = 5;
  const char* path = getenv("PROVKIT_FAKE_GPU");
  if (!path) return -1;
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    if (line[0] == '#' || line[0] == 0) continue;
    char* eq = strchr(line, '=');
    if (!eq) continue;
    *eq = 0;
    const char* key = line;
    const char* val = eq + 1;
    int i, j;
    char field[64];
    if (strcmp(key, "driver_version") == 0) snprintf(d->driver_version, sizeof d->driver_version, "%s", val);
    else if (strcmp(key, "cuda_version") == 0) d->cuda_version = atoi(val);
    else if (strcmp(key, "libcuda_version") == 0) d->libcuda_version = atoi(val);
    else if (strcmp(key, "nvml_init") == 0) d->nvml_init = atoi(val);
    else if (strcmp(key, "nvml_init_ms") == 0) d->nvml_init_ms = atoi(val);
    else if (sscanf(key, "p2p.%d.%d", &i, &j) == 2 && i >= 0 && j >= 0 && i < FAKE_MAX_GPUS && j < FAKE_MAX_GPUS)
      d->p2p[i][j] = d->p2p[j][i] = atoi(val);
    else if (sscanf(key, "nvlink.%d.%d", &i, &j) == 2 && i >= 0 && j >= 0 && i < FAKE_MAX_GPUS && j < FAKE_MAX_GPUS)
      d->nvlink[i][j] = d->nvlink[j][i] = atoi(val);
    else if (sscanf(key, "cuda_peer.%d.%d", &i, &j) == 2 && i >= 0 && j >= 0 && i < FAKE_MAX_GPUS && j < FAKE_MAX_GPUS)
      d->cuda_peer[i][j] = d->cuda_peer[j][i] = atoi(val);
    else if (sscanf(key, "gpu.%d.mig.%d.%63s", &i, &j, field) == 3 && i >= 0 && i < FAKE_MAX_GPUS && j >= 0 &&
             j < FAKE_MAX_MIGS) {
      struct fake_gpu* m = &d->migs[i][j];
      if (i + 1 > d->gpu_count) d->gpu_count = i + 1;
      m->is_mig = 1;
      m->parent = i;
      if (strcmp(field, "uuid") == 0) snprintf(m->uuid, sizeof m->uuid, "%s", val);
      else if (strcmp(field, "name") == 0) snprintf(m->name, sizeof m->name, "%s", val);
      else if (strcmp(field, "gi") == 0) m->gi = atoi(val);
      else if (strcmp(field, "ci") == 0) m->ci = atoi(val);
      else if (strcmp(field, "memory_total") == 0) m->memory_total = strtoull(val, NULL, 10);
      else if (strcmp(field, "memory_free") == 0) m->memory_free = strtoull(val, NULL, 10);
    } else if (sscanf(key, "gpu.%d.process.%d", &i, &j) == 2 && i >= 0 && i < FAKE_MAX_GPUS && j >= 0 &&
               j < FAKE_MAX_PROCESSES) {
      struct fake_process* p = &d->gpus[i].processes[j];
      char memory[32] = "", kind[16] = "compute";
      unsigned gi = 0xFFFFFFFFu, ci = 0xFFFFFFFFu;
      if (i + 1 > d->gpu_count) d->gpu_count = i + 1;
      if (sscanf(val, "%u,%31[^,],%15[^,],%u,%u", &p->pid, memory, kind, &gi, &ci) < 2) continue;
      p->memory = strcmp(memory, "na") == 0 ? ~0ULL : strtoull(memory, NULL, 10);
      p->compute = strcmp(kind, "graphics") != 0;
      p->graphics = strcmp(kind, "compute") != 0;
      p->gi = gi;
      p->ci = ci;
    } else if (sscanf(key, "gpu.%d.%63s", &i, field) == 2 && i >= 0 && i < FAKE_MAX_GPUS) {
      struct fake_gpu* g = &d->gpus[i];
      if (i + 1 > d->gpu_count) d->gpu_count = i + 1;
      if (strcmp(field, "uuid") == 0) snprintf(g->uuid, sizeof g->uuid, "%s", val);
      else if (strcmp(field, "name") == 0) snprintf(g->name, sizeof g->name, "%s", val);
      else if (strcmp(field, "cc") == 0) sscanf(val, "%d.%d", &g->cc_major, &g->cc_minor);
      else if (strcmp(field, "memory_total") == 0) g->memory_total = strtoull(val, NULL, 10);
      else if (strcmp(field, "memory_free") == 0) g->memory_free = strtoull(val, NULL, 10);
      else if (strcmp(field, "pcie_gen") == 0) sscanf(val, "%u,%u", &g->gen_cur, &g->gen_max);
      else if (strcmp(field, "pcie_width") == 0) sscanf(val, "%u,%u", &g->width_cur, &g->width_max);
      else if (strcmp(field, "pcie_load") == 0) sscanf(val, "%u,%u", &g->gen_load, &g->width_load);
      else if (strcmp(field, "pci_bus_id") == 0) snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", val);
      else if (strcmp(field, "mig_mode") == 0) g->mig_mode = atoi(val);
    }
  }
  fclose(f);
  if (d->libcuda_version < 0) d->libcuda_version = d->cuda_version;
  for (int k = 0; k < d->gpu_count; ++k) {
    struct fake_gpu* g = &d->gpus[k];
    if (!g->pci_bus_id[0]) snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "0000:%02x:00.0", k + 1);
    if (!g->gen_load) g->gen_load = g->gen_cur;
    if (!g->width_load) g->width_load = g->width_cur;
  }
  return 0;
}

#endif
