import Glibc

/// The real-time rules, for everything in this module and every function the audio thread
/// calls anywhere in ribbit.
///
/// The audio thread (JACK's process callback) must finish every period in time whatever the
/// rest of the machine does, so it never waits on anything it does not control:
///
/// 1. No allocation or freeing: every buffer is allocated when the object is made, off the
///    audio thread. No Swift arrays, strings, closures that capture, or existentials there.
/// 2. No locks, no waiting: control threads talk to it only through atomics (`ConfigSlot`,
///    `SeqlockSnapshot`, `SampleRing`). The audio side never spins and never blocks; when a
///    slot or ring is busy it tries again next period, or drops and counts.
/// 3. No reference counting: class-typed values are reached through `Unmanaged` and
///    `_withUnsafeGuaranteedRef`, and the audio thread never drops the last reference to
///    anything (retired configs go back to the control side), so no `deinit` runs there.
/// 4. No logging, no I/O, no system calls (`clock_gettime` through the vDSO is the one
///    exception), no throwing: problems become counters and a documented fail-safe output.
///
/// **How to see it.** Every function the audio thread may call is marked, just above its
/// declaration, with
///
///     #if RIBBIT_RT_AUDIT
///     @_noLocks
///     #endif
///
/// and lives under a `// MARK: Audio thread` heading. `make rt-check` builds in release with
/// `-DRIBBIT_RT_AUDIT`, where the compiler proves for each marked function and everything it
/// calls that it takes no lock, allocates nothing and does no reference counting (the attribute
/// implies `@_noAllocation`'s checks for locks and allocation; it cannot see inside C
/// functions: FFTW's execute and `clock_gettime` are called inside `_unsafePerformance`). Debug
/// builds skip the check: on Swift 6.3.1 the attribute miscompiles there.
///
/// **The running proof** is `Tests/RibbitRTAudit`: an LD_PRELOAD shim that counts malloc, free,
/// mutex locks and system calls made inside JACK's process callback of the release daemon
/// (`DaemonControlTests.processCallbackNeverAllocatesOrLocks`, which expects 0).
public enum Realtime {
    /// CLOCK_MONOTONIC in nanoseconds, through the vDSO: no system call, no lock.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public static func monotonicNanoseconds() -> Int {
        var t = timespec()
        _unsafePerformance { _ = clock_gettime(CLOCK_MONOTONIC, &t) }
        return t.tv_sec &* 1_000_000_000 &+ t.tv_nsec
    }
}
