/* Keeps the tools' glibc floor at 2.34 (RHEL 9) while they are linked on
 * Debian 12 (glibc 2.36) with the C++ runtime inside them.
 *
 * gcc 12's unwinder (libgcc_eh.a, linked by -static-libgcc) finds a frame's
 * unwind tables with _dl_find_object, new in glibc 2.35, because Debian built
 * it against 2.36; that one reference is what lifts every C++ binary to
 * GLIBC_2.35. Defined here, in the executable, the unwinder's reference binds
 * to this definition at link time and no GLIBC_2.35 version is required. It
 * answers from dl_iterate_phdr (glibc 2.2.4), the way gcc 11's unwinder found
 * the same tables: the loaded object whose PT_LOAD segments hold the address,
 * and its PT_GNU_EH_FRAME segment. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* Built where glibc has no _dl_find_object (before 2.35), the unwinder does not use it. */
#ifdef DLFO_STRUCT_HAS_EH_DBASE
struct provkit_find {
  uintptr_t address;
  struct dl_find_object* result;
  int found;
};

static int provkit_find_object_in(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct provkit_find* find = data;
  uintptr_t low = UINTPTR_MAX, high = 0;
  const void* eh_frame = NULL;
  int holds = 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD) {
      uintptr_t end = start + ph->p_memsz;
      if (start < low) low = start;
      if (end > high) high = end;
      if (find->address >= start && find->address < end) holds = 1;
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      eh_frame = (const void*)start;
    }
  }
  if (!holds) return 0;
  find->result->dlfo_flags = 0;
  find->result->dlfo_map_start = (void*)low;
  find->result->dlfo_map_end = (void*)high;
  find->result->dlfo_link_map = NULL;
  find->result->dlfo_eh_frame = (void*)eh_frame;
  find->found = 1;
  return 1;
}

int _dl_find_object(void* address, struct dl_find_object* result) {
  struct provkit_find find = {(uintptr_t)address, result, 0};
  dl_iterate_phdr(provkit_find_object_in, &find);
  if (!find.found) return -1;
  /* The link map is asked for after dl_iterate_phdr has let its lock go: dladdr1
   * takes the loader's other lock, and a dlopen on another thread takes the two
   * in the other order, so asking from inside the callback could deadlock an
   * exception thrown while another thread loads a library (envcheck reads the
   * driver's libraries on threads of their own). */
  Dl_info where;
  dladdr1(address, &where, (void**)&result->dlfo_link_map, RTLD_DL_LINKMAP);
  return 0;
}
#endif

/* arc4random and arc4random_buf are new in glibc 2.36. libstdc++.a's random.o
 * (std::random_device, pulled in by the library's own COW-string
 * instantiations whether or not provkit uses it) refers to the first,
 * libarchive.a's archive_random.o to the second (Debian built both against
 * 2.36). Defined here from getrandom (glibc 2.25), falling back to
 * /dev/urandom where the kernel has no getrandom. */
#if __GLIBC_PREREQ(2, 36)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

static void provkit_fill_random(void* buffer, size_t size) {
  unsigned char* at = buffer;
  while (size > 0) {
    ssize_t n = getrandom(at, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += n;
    size -= (size_t)n;
  }
  if (size == 0) return;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  while (fd >= 0 && size > 0) {
    ssize_t n = read(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += n;
    size -= (size_t)n;
  }
  if (fd >= 0) close(fd);
  if (size > 0) abort(); /* as glibc's arc4random does without a source of randomness */
}

uint32_t arc4random(void) {
  uint32_t value;
  provkit_fill_random(&value, sizeof value);
  return value;
}

void arc4random_buf(void* buffer, size_t size) { provkit_fill_random(buffer, size); }
#endif
