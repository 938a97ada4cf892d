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

    /// FFTW's planner and its wisdom are process-wide and not thread-safe (`FFTWisdom` too).
    static let planner = Mutex(())

    /// How a length is planned. FFTW_MEASURE times candidate plans: about 25 % faster
    /// transforms at every length from 128 to 4096, but 50-400 ms of planning per length
    /// without wisdom (`ribbit-bench`'s planning table); with wisdom it costs 0.2 ms.
    public enum Planning: Sendable {
        /// The fastest plan: from wisdom when known, else timed (and then known to the wisdom).
        case measure
        /// Planned at once from a model of the machine.
        case estimate
        /// The measured plan when the wisdom knows it, else `estimate`: for work too short to
        /// repay timing (a file, a fitting's detector reading), never adding to the wisdom.
        case wisdomOrEstimate
    }

    /// - Parameter measure: `.measure` or `.estimate` (for analysis off the audio thread, where
    ///   a few microseconds per transform do not matter).
    public convenience init(length: Int, measure: Bool = true) {
        self.init(length: length, planning: measure ? .measure : .estimate)
    }

    public init(length: Int, planning: Planning) {
        precondition(length >= 2 && length % 2 == 0, "FFT length must be even")
        self.length = length
        let real = Self.allocateReal(length)
        let complex = Self.allocateComplex(length / 2 + 1)
        defer {
            fftwf_free(real)
            fftwf_free(complex)
        }
        // MEASURE overwrites the arrays, so plan before any data exists.
        func plan(_ flags: UInt32) -> (fftwf_plan?, fftwf_plan?) {
            (
                fftwf_plan_dft_r2c_1d(Int32(length), real, Self.asComplex(complex), flags),
                fftwf_plan_dft_c2r_1d(Int32(length), Self.asComplex(complex), real, flags)
            )
        }
        nonisolated(unsafe) var plans: (fftwf_plan?, fftwf_plan?) = (nil, nil)
        Self.planner.withLock { _ in
            switch planning {
            case .measure: plans = plan(UInt32(FFTW_MEASURE))
            case .estimate: plans = plan(UInt32(FFTW_ESTIMATE))
            case .wisdomOrEstimate:
                plans = plan(UInt32(FFTW_MEASURE) | UInt32(FFTW_WISDOM_ONLY))
                if plans.0 == nil || plans.1 == nil {
                    for p in [plans.0, plans.1] { if let p { fftwf_destroy_plan(p) } }
                    plans = plan(UInt32(FFTW_ESTIMATE))
                }
            }
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
