// RT audit: an LD_PRELOAD shim that counts, inside a JACK client's process callback only,
// calls that a real-time thread must never make: heap allocation and freeing, mutex locks,
// and raw system calls (the Swift runtime's locks are futex system calls).
//
// It interposes jack_set_process_callback to wrap the client's callback in a trampoline that
// marks the thread as "in process" while the callback runs. What a callback calls is kept on
// its thread and added to the totals when the callback returns: jack_deactivate cancels the
// process thread asynchronously (jack2's JackPosixThread), so a callback can be cut short, and
// what the dying thread frees then (glibc's thread cache, TLS) is its teardown, not the
// callback's; such callbacks are counted as "cut-short". At exit it writes the counts to the
// file named by RIBBIT_RTAUDIT_REPORT ("%p" in it becomes the pid, so every process of a run
// keeps its own) as "name count" lines (only a process that had a process callback writes
// it), then, for the first calls it counted, "at NAME SYMBOL OBJECT ADDRESS" lines: which
// function made the call (dladdr of the return address), so a count can be traced.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jack/jack.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

enum { MALLOC, CALLOC, REALLOC, FREE, MEMALIGN, MUTEX_LOCK, SYSCALL, CALLBACKS, CUT_SHORT, COUNTERS };
static const char *names[COUNTERS] = {
    "malloc", "calloc", "realloc", "free", "memalign", "pthread_mutex_lock", "syscall", "callbacks", "cut-short"};
static atomic_long counts[COUNTERS];
static atomic_long entered;
// Calls made by callbacks that have not returned: at exit, those of the callbacks cut short.
static atomic_long uncommitted[COUNTERS];

// The callers of the first counted calls, recorded without allocating, named at exit.
enum { MAX_CALLERS = 32, MAX_PENDING = 8 };
static void *callers[MAX_CALLERS];
static int caller_kinds[MAX_CALLERS];
static atomic_int caller_count;

// The running callback's calls, on its own thread until it returns.
static __thread int in_process;
static __thread long pending[COUNTERS];
static __thread void *pending_callers[MAX_PENDING];
static __thread int pending_kinds[MAX_PENDING];
static __thread int pending_count;

#define COUNT(which)                                                                     \
    do {                                                                                 \
        if (in_process) {                                                                \
            pending[which]++;                                                            \
            atomic_fetch_add_explicit(&uncommitted[which], 1, memory_order_relaxed);     \
            if (pending_count < MAX_PENDING) {                                           \
                pending_callers[pending_count] = __builtin_return_address(0);            \
                pending_kinds[pending_count] = which;                                    \
            }                                                                            \
            pending_count++;                                                             \
        }                                                                                \
    } while (0)

void *malloc(size_t size) { COUNT(MALLOC); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { COUNT(CALLOC); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { COUNT(REALLOC); return __libc_realloc(pointer, size); }
void free(void *pointer) { COUNT(FREE); __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { COUNT(MEMALIGN); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { COUNT(MEMALIGN); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    COUNT(MEMALIGN);
    *out = __libc_memalign(alignment, size);
    return *out ? 0 : 12;  // ENOMEM
}

static int (*real_mutex_lock)(pthread_mutex_t *);
static long (*real_syscall)(long, ...);
static int (*real_set_process)(jack_client_t *, JackProcessCallback, void *);

int pthread_mutex_lock(pthread_mutex_t *mutex) {
    COUNT(MUTEX_LOCK);
    if (!real_mutex_lock) real_mutex_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    return real_mutex_lock(mutex);
}

long syscall(long number, ...) {
    COUNT(SYSCALL);
    if (!real_syscall) real_syscall = dlsym(RTLD_NEXT, "syscall");
    va_list list;
    va_start(list, number);
    long a = va_arg(list, long), b = va_arg(list, long), c = va_arg(list, long);
    long d = va_arg(list, long), e = va_arg(list, long), f = va_arg(list, long);
    va_end(list);
    return real_syscall(number, a, b, c, d, e, f);
}

static JackProcessCallback client_callback;

/// Adds the finished callback's calls to the totals.
static void commit(void) {
    for (int i = 0; i < COUNTERS; i++) {
        if (pending[i]) {
            atomic_fetch_add_explicit(&counts[i], pending[i], memory_order_relaxed);
            atomic_fetch_sub_explicit(&uncommitted[i], pending[i], memory_order_relaxed);
        }
        pending[i] = 0;
    }
    for (int i = 0; i < pending_count && i < MAX_PENDING; i++) {
        int at = atomic_fetch_add_explicit(&caller_count, 1, memory_order_relaxed);
        if (at < MAX_CALLERS) {
            callers[at] = pending_callers[i];
            caller_kinds[at] = pending_kinds[i];
        }
    }
    pending_count = 0;
}

static int trampoline(jack_nframes_t frames, void *argument) {
    atomic_fetch_add_explicit(&entered, 1, memory_order_relaxed);
    in_process = 1;
    int result = client_callback(frames, argument);
    in_process = 0;
    commit();
    atomic_fetch_add_explicit(&counts[CALLBACKS], 1, memory_order_relaxed);
    return result;
}

int jack_set_process_callback(jack_client_t *client, JackProcessCallback callback, void *argument) {
    if (!real_set_process) real_set_process = dlsym(RTLD_NEXT, "jack_set_process_callback");
    client_callback = callback;
    return real_set_process(client, trampoline, argument);
}

__attribute__((constructor)) static void resolve(void) {
    real_mutex_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_syscall = dlsym(RTLD_NEXT, "syscall");
    real_set_process = dlsym(RTLD_NEXT, "jack_set_process_callback");
}

__attribute__((destructor)) static void report(void) {
    const char *pattern = getenv("RIBBIT_RTAUDIT_REPORT");
    // Only a process that ran a process callback reports: ribbitd's audio process, not the
    // daemon that started it (the shim is preloaded into both).
    if (!pattern || atomic_load(&counts[CALLBACKS]) == 0) return;
    char path[4096];
    const char *mark = strstr(pattern, "%p");
    if (mark) {
        snprintf(path, sizeof path, "%.*s%ld%s", (int)(mark - pattern), pattern, (long)getpid(), mark + 2);
    } else {
        snprintf(path, sizeof path, "%s", pattern);
    }
    FILE *file = fopen(path, "w");
    if (!file) return;
    atomic_store(&counts[CUT_SHORT], atomic_load(&entered) - atomic_load(&counts[CALLBACKS]));
    for (int i = 0; i < COUNTERS; i++) fprintf(file, "%s %ld\n", names[i], atomic_load(&counts[i]));
    // What the threads of cut-short callbacks called before they were gone (their teardown).
    for (int i = 0; i < CALLBACKS; i++) {
        long left = atomic_load(&uncommitted[i]);
        if (left) fprintf(file, "cut-short-%s %ld\n", names[i], left);
    }
    int recorded = atomic_load(&caller_count);
    for (int i = 0; i < recorded && i < MAX_CALLERS; i++) {
        Dl_info info;
        int found = dladdr(callers[i], &info);
        fprintf(
            file, "at %s %s %s %p\n", names[caller_kinds[i]], found && info.dli_sname ? info.dli_sname : "?",
            found && info.dli_fname ? info.dli_fname : "?", callers[i]);
    }
    fclose(file);
}
