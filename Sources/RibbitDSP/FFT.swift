import CFFTW
import Synchronization

/// Real FFT plans of one length, shared by every channel of an engine.
///
/// Contract (FFTW's, restated): `forward` is r2c, X[k] = sum_n x[n] e^(-2 pi i k n / N) for
/// k in 0...N/2, interleaved (re, im), unnormalised. `inverse` is c2r, unnormalised, so
/// inverse(forward(x)) = N x; the engine folds the 1/N into its filter spectra. c2r destroys
/// its input. Planning happens only here, under a process-wide lock (FFTW's planner is not
/// thread-safe); the execute calls are thread-safe and do not allocate. Buffers passed to
/// them must come from `allocateReal` / `allocateComplex` (FFTW's SIMD alignment).
public final class RealFFT: @unchecked Sendable {
    public let length: Int
    public var complexCount: Int { length / 2 + 1 }
    private let forwardPlan: fftwf_plan
    private let inversePlan: fftwf_plan

    private static let planner = Mutex(())

    /// - Parameter measure: FFTW_MEASURE (the fastest plan, found by timing: up to hundreds of
    ///   ms for long lengths without wisdom) or FFTW_ESTIMATE (planned at once; for analysis
    ///   off the audio thread, where a few microseconds per transform do not matter).
    public init(length: Int, measure: Bool = true) {
        precondition(length >= 2 && length % 2 == 0, "FFT length must be even")
        self.length = length
        let real = Self.allocateReal(length)
        let complex = Self.allocateComplex(length / 2 + 1)
        defer {
            fftwf_free(real)
            fftwf_free(complex)
        }
        // MEASURE overwrites the arrays, so plan before any data exists.
        let flags = UInt32(measure ? FFTW_MEASURE : FFTW_ESTIMATE)
        nonisolated(unsafe) var plans: (fftwf_plan?, fftwf_plan?) = (nil, nil)
        Self.planner.withLock { _ in
            plans = (
                fftwf_plan_dft_r2c_1d(Int32(length), real, Self.asComplex(complex), flags),
                fftwf_plan_dft_c2r_1d(Int32(length), Self.asComplex(complex), real, flags)
            )
        }
        forwardPlan = plans.0!
        inversePlan = plans.1!
    }

    deinit {
        Self.planner.withLock { _ in
            fftwf_destroy_plan(forwardPlan)
            fftwf_destroy_plan(inversePlan)
        }
    }

    // MARK: Audio thread (FFTW's new-array execute: thread-safe, no allocation; the compiler
    // cannot look inside C, hence `_unsafePerformance`)

    /// r2c: `length` reals in, `complexCount` interleaved complex out. Input preserved.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    public func forward(_ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>) {
        let plan = forwardPlan
        _unsafePerformance { fftwf_execute_dft_r2c(plan, input, complexView(output)) }
    }

    /// c2r: `complexCount` interleaved complex in (destroyed), `length` reals out.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    public func inverse(_ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>) {
        let plan = inversePlan
        _unsafePerformance { fftwf_execute_dft_c2r(plan, complexView(input), output) }
    }

    /// `count` floats, zeroed, SIMD-aligned. Free with `free(_:)`.
    public static func allocateReal(_ count: Int) -> UnsafeMutablePointer<Float> {
        let p = fftwf_alloc_real(count)!
        p.initialize(repeating: 0, count: count)
        return p
    }

    /// `count` complex values as 2 * count interleaved floats, zeroed. Free with `free(_:)`.
    public static func allocateComplex(_ count: Int) -> UnsafeMutablePointer<Float> {
        let raw = UnsafeMutableRawPointer(fftwf_alloc_complex(count)!)
        let p = raw.bindMemory(to: Float.self, capacity: 2 * count)
        p.initialize(repeating: 0, count: 2 * count)
        return p
    }

    @inline(__always)
    static func asComplex(_ p: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<fftwf_complex> {
        UnsafeMutableRawPointer(p).assumingMemoryBound(to: fftwf_complex.self)
    }

    public static func free(_ pointer: UnsafeMutablePointer<Float>) {
        fftwf_free(pointer)
    }
}

/// Interleaved floats as FFTW's complex type (a C tuple: the RT check cannot see through it,
/// so only inside `_unsafePerformance`).
@inline(__always)
private func complexView(_ p: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<fftwf_complex> {
    UnsafeMutableRawPointer(p).assumingMemoryBound(to: fftwf_complex.self)
}
