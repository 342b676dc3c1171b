/* Stand-in libnvidia-ml.so.1: the NVML entry points envcheck calls, with
 * NVML's documented signatures, answering from $PROVKIT_FAKE_GPU. */
#include <dlfcn.h>
#include <strings.h>
#include <time.h>

#include "fake_gpu_desc.h"

typedef int nvmlReturn_t; /* NVML_SUCCESS 0, UNINITIALIZED 1, INVALID_ARGUMENT 2, INSUFFICIENT_SIZE 7, DRIVER_NOT_LOADED 9 */
typedef struct fake_gpu* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

static struct fake_desc desc;
static int initialised;

nvmlReturn_t nvmlInit_v2(void) {
  if (fake_desc_load(&desc) != 0) return 9;
  if (desc.nvml_init_ms > 0) {
    struct timespec t = {desc.nvml_init_ms / 1000, (desc.nvml_init_ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
  }
  if (desc.nvml_init != 0) return desc.nvml_init;
  initialised = 1;
  return 0;
}

nvmlReturn_t nvmlShutdown(void) {
  if (!initialised) return 1;
  initialised = 0;
  return 0;
}

static nvmlReturn_t copy_string(char* out, unsigned length, const char* value) {
  if (!out) return 2;
  if (strlen(value) + 1 > length) return 7;
  strcpy(out, value);
  return 0;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  if (!initialised) return 1;
  return copy_string(version, length, desc.driver_version);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  if (!initialised) return 1;
  if (!v) return 2;
  *v = desc.cuda_version;
  return 0;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialised) return 1;
  if (!count) return 2;
  *count = (unsigned)desc.gpu_count;
  return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (!initialised) return 1;
  if (!device || index >= (unsigned)desc.gpu_count) return 2;
  *device = &desc.gpus[index];
  return 0;
}

static int index_of(nvmlDevice_t d) {
  if (d < desc.gpus || d >= desc.gpus + desc.gpu_count) return -1;
  return (int)(d - desc.gpus);
}

/* A handle of a MIG instance this description has. */
static int is_mig_handle(nvmlDevice_t d) {
  const struct fake_gpu* first = &desc.migs[0][0];
  return d >= first && d < first + FAKE_MAX_GPUS * FAKE_MAX_MIGS && d->is_mig && d->uuid[0];
}

/* The calls NVML answers for a GPU and for a MIG instance alike. */
static int any_handle(nvmlDevice_t d) { return index_of(d) >= 0 || is_mig_handle(d); }

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned length) {
  if (!any_handle(d)) return 2;
  return copy_string(uuid, length, d->uuid);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned length) {
  if (!any_handle(d)) return 2;
  return copy_string(name, length, d->name);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  if (index_of(d) < 0 || !current || !pending) return 2;
  *current = *pending = (unsigned)d->mig_mode;
  return 0;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned* count) {
  if (index_of(d) < 0 || !count) return 2;
  *count = d->mig_mode ? FAKE_MAX_MIGS : 0;
  return 0;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned index, nvmlDevice_t* mig) {
  int i = index_of(d);
  if (i < 0 || !mig || index >= FAKE_MAX_MIGS) return 2;
  if (!d->mig_mode) return 3;                        /* NVML_ERROR_NOT_SUPPORTED */
  if (!desc.migs[i][index].uuid[0]) return 6;        /* NVML_ERROR_NOT_FOUND: an empty slot */
  *mig = &desc.migs[i][index];
  return 0;
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t* device) {
  if (!is_mig_handle(mig) || !device) return 2;
  *device = &desc.gpus[mig->parent];
  return 0;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned* id) {
  if (!is_mig_handle(mig) || !id) return 2;
  *id = (unsigned)mig->gi;
  return 0;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t mig, unsigned* id) {
  if (!is_mig_handle(mig) || !id) return 2;
  *id = (unsigned)mig->ci;
  return 0;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  if (index_of(d) < 0 || !major || !minor) return 2;
  *major = d->cc_major;
  *minor = d->cc_minor;
  return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* memory) {
  if (!any_handle(d) || !memory) return 2;
  memory->total = d->memory_total;
  memory->free = d->memory_free;
  memory->used = d->memory_total - d->memory_free;
  return 0;
}

#define UINT_GETTER(fn, field)                         \
  nvmlReturn_t fn(nvmlDevice_t d, unsigned* out) {     \
    if (index_of(d) < 0 || !out) return 2;             \
    *out = d->field;                                   \
    return 0;                                          \
  }
UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, gen_max)
UINT_GETTER(nvmlDeviceGetGpuMaxPcieLinkGeneration, gen_max)

/* While the stand-in libcuda (the one envcheck loaded, $ENVCHECK_CUDA_LIB)
 * copies on this GPU, the link reads as trained under load. */
static int copying(int index) {
  const char* lib = getenv("ENVCHECK_CUDA_LIB");
  void* h = lib ? dlopen(lib, RTLD_NOLOAD | RTLD_LAZY) : NULL;
  if (!h) return 0;
  int (*probe)(int) = (int (*)(int))dlsym(h, "provkit_fake_cuda_copying");
  int busy = probe ? probe(index) : 0;
  dlclose(h);
  return busy;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned* out) {
  if (index_of(d) < 0 || !out) return 2;
  *out = copying(index_of(d)) ? d->gen_load : d->gen_cur;
  return 0;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned* out) {
  if (index_of(d) < 0 || !out) return 2;
  *out = copying(index_of(d)) ? d->width_load : d->width_cur;
  return 0;
}

typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  if (index_of(d) < 0 || !pci) return 2;
  memset(pci, 0, sizeof *pci);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", d->pci_bus_id);
  snprintf(pci->busId, sizeof pci->busId, "0000%s", d->pci_bus_id); /* NVML's 8-digit domain */
  return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  if (!initialised) return 1;
  if (!bus_id || !device) return 2;
  if (strlen(bus_id) == 16 && strncmp(bus_id, "0000", 4) == 0) bus_id += 4;
  for (int i = 0; i < desc.gpu_count; ++i)
    if (strcasecmp(desc.gpus[i].pci_bus_id, bus_id) == 0) {
      *device = &desc.gpus[i];
      return 0;
    }
  return 6; /* NVML_ERROR_NOT_FOUND */
}
UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, width_max)

/* p2pIndex: NVML_P2P_CAPS_INDEX_READ 0, WRITE 1, NVLINK 2, ATOMICS 3, PCI 4. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int p2pIndex, int* status) {
  int i = index_of(a), j = index_of(b);
  if (i < 0 || j < 0 || !status) return 2;
  *status = p2pIndex == 2 ? desc.nvlink[i][j] : desc.p2p[i][j];
  return 0;
}

/* nvmlProcessInfo_t (the _v2 and _v3 lists fill the same record). */
typedef struct {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

/* NVML's sizing protocol: *count in, the number of records out; INSUFFICIENT_SIZE when they do not fit. */
static nvmlReturn_t running_processes(nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* infos, int graphics) {
  if (index_of(d) < 0 || !count) return 2;
  unsigned n = 0;
  for (int k = 0; k < FAKE_MAX_PROCESSES; ++k) {
    const struct fake_process* p = &d->processes[k];
    if (!p->pid || !(graphics ? p->graphics : p->compute)) continue;
    if (n < *count && infos) {
      infos[n].pid = p->pid;
      infos[n].usedGpuMemory = p->memory;
      infos[n].gpuInstanceId = p->gi;
      infos[n].computeInstanceId = p->ci;
    }
    ++n;
  }
  nvmlReturn_t rc = n > *count ? 7 : 0;
  *count = n;
  return rc;
}

/* A driver older than 510 has only the _v2 lists: the stand-in built with FAKE_NVML_NO_V3 is one. */
#ifndef FAKE_NVML_NO_V3
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* infos) {
  return running_processes(d, count, infos, 0);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* infos) {
  return running_processes(d, count, infos, 1);
}
#endif
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* infos) {
  return running_processes(d, count, infos, 0);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* infos) {
  return running_processes(d, count, infos, 1);
}
