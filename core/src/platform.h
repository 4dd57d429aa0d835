/* platform.h: detects the platform once and names the few primitives the core needs
 * from it (a mutex, thread identity, the monotonic clock) and the one hook a platform's
 * own layer supplies (its outputs).
 *
 * Every other file tests the VOR_PLATFORM_* macros defined here instead of compiler or
 * OS macros, so adding a platform means reading this file and the *_<platform>.c files.
 * The ladder ends in #error: an unknown platform fails to build rather than silently
 * getting a fallback that measures nonsense.
 */
#ifndef VOR_PLATFORM_H
#define VOR_PLATFORM_H

#if defined(__EMSCRIPTEN__)
#define VOR_PLATFORM_WASM 1
#elif defined(__linux__)
#define VOR_PLATFORM_LINUX 1
#else
#error "vor: unsupported platform (supported: Linux and Emscripten; a port adds a system_metrics_<platform>.c)"
#endif

#if defined(__x86_64__) || defined(__i386__)
#define VOR_ARCH_X86 1
#elif defined(__aarch64__)
#define VOR_ARCH_ARM64 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define VOR_LIKELY(x) __builtin_expect(!!(x), 1)
#define VOR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VOR_NOINLINE __attribute__((noinline))
#define VOR_HIDDEN __attribute__((visibility("hidden")))
#define VOR_NO_INSTRUMENT __attribute__((no_instrument_function))
#define VOR_TLS __thread
#define VOR_TLS_FAST __attribute__((tls_model("initial-exec"))) __thread
#else
#error "vor: the core needs GCC or Clang (thread-local storage, atomics builtins)"
#endif

#include <pthread.h>

typedef pthread_mutex_t vor_mutex;
#define VOR_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
/* Every lock of the core is taken and released with these (log.c): they count the locks
 * the calling thread holds, so that the logger is never called while it holds one. The
 * fork handlers (session.c) take the locks with the raw pthread calls. */
VOR_HIDDEN void vor_mutex_lock(vor_mutex *m);
VOR_HIDDEN void vor_mutex_unlock(vor_mutex *m);

/* Outputs a platform opens at each session start besides the files of the environment
 * (outputs.c calls it): a link-time hook, defined once per platform by the platform's
 * layer of the library. In a browser the DevTools sink (added by the wasm flavour); none
 * natively (platform_outputs_none.c). The core names nothing of those layers. */
VOR_HIDDEN void vor_platform_outputs_open(void);

/* fork() (Linux): every file that owns a lock has a hook that session.c's pthread_atfork
 * handlers call in one global order (see there): PREPARE takes the lock, PARENT releases
 * it, CHILD resets what the child does not inherit (other threads) and releases it. */
typedef enum vor_fork_phase { VOR_FORK_PREPARE, VOR_FORK_PARENT, VOR_FORK_CHILD } vor_fork_phase;

/* Relaxed/acquire/release atomics on plain integers, through the compiler builtins so
 * that the same code is C11 without <stdatomic.h> types in shared structs. */
#define vor_atomic_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define vor_atomic_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define vor_atomic_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define vor_atomic_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define vor_atomic_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define vor_atomic_exchange(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define vor_atomic_cas(p, expected_ptr, desired) \
    __atomic_compare_exchange_n((p), (expected_ptr), (desired), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

#endif /* VOR_PLATFORM_H */
