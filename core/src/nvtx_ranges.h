/* nvtx_ranges.h: an NVTX range per scope and an NVTX mark per frame, with VOR_NVTX=1.
 *
 * Natively, nvtx_ranges.c calls NVTX's own header API (third_party/nvtx3, header-only):
 * NVTX loads the tool (Nsight Systems, or any library named by NVTX_INJECTION64_PATH) at
 * run time the way it always does, so building vor needs no CUDA toolkit and running it
 * needs no driver. The hot path pays one predicted branch on `vor_nvtx_on` when it is off;
 * the flag is decided once per process, before the first session collects, and never
 * changes after, so every range vor pushes is popped by the same scope's end. In wasm
 * there is no NVTX: the checks are the constant 0 and compile away.
 */
#ifndef VOR_NVTX_RANGES_H
#define VOR_NVTX_RANGES_H

#include "vor_internal.h"

#if defined(VOR_PLATFORM_LINUX)
VOR_HIDDEN extern int vor_nvtx_on;
/* Acquire: a thread that sees the flag on also sees the domain it was set with (a plain load on x86). */
#define VOR_NVTX_ON() VOR_UNLIKELY(vor_atomic_load_acquire(&vor_nvtx_on))
/* Reads VOR_NVTX the first time a session starts (later sessions keep that decision). */
VOR_HIDDEN void vor_nvtx_begin_session(void);
/* Opens the range of a scope at `site` on the calling thread. */
VOR_HIDDEN void vor_nvtx_push(const vor_site *site);
/* Closes the calling thread's innermost range (called only when a vor scope is open). */
VOR_HIDDEN void vor_nvtx_pop(void);
/* Marks the end of frame `index` (the frame thread, at vor_frame_mark). */
VOR_HIDDEN void vor_nvtx_frame(uint64_t index);
#else
#define VOR_NVTX_ON() 0
static inline void vor_nvtx_push(const vor_site *site) { (void)site; }
static inline void vor_nvtx_pop(void) {}
static inline void vor_nvtx_frame(uint64_t index) { (void)index; }
#endif

#endif /* VOR_NVTX_RANGES_H */
