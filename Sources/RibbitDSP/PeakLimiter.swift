import Glibc

/// The safety ceiling: a smooth peak limiter followed by a soft saturator.
///
/// The limiter pulls the gain down (attack 0.5 ms) when the signal passes the knee, 3 dB below
/// the ceiling, and lets it recover (release 50 ms). It has no look-ahead, which would add
/// latency, so fast peaks can overshoot the knee for a moment; the saturator takes those
/// smoothly towards the ceiling with knee + (ceiling - knee) * tanh(excess / (ceiling - knee)),
/// which is continuous with slope 1 at the knee and never reaches above the ceiling. So the
/// ceiling holds for every input, while moderate levels pass untouched (no hard clipping).
public struct PeakLimiter: Sendable {
    public static let kneeBelowCeilingDB = 3.0
    public private(set) var gain: Float = 1
    let attack: Float
    let release: Float

    public init(sampleRate: Double, attackSeconds: Double = 0.0005, releaseSeconds: Double = 0.05) {
        attack = Float(1 - exp(-1 / (attackSeconds * sampleRate)))
        release = Float(1 - exp(-1 / (releaseSeconds * sampleRate)))
    }

    public static func knee(ceiling: Float) -> Float {
        ceiling * Float(pow(10, -kneeBelowCeilingDB / 20))
    }

    /// Limits `count` samples in place. Returns how many were changed (gain below 1 or
    /// saturated). Non-finite samples become 0.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    public mutating func process(_ samples: UnsafeMutablePointer<Float>, count: Int, ceiling: Float, knee: Float) -> Int {
        var g = gain
        if g == 1 {
            // Fast path, the usual case: the gain has recovered and no sample reaches the knee
            // (NaN counts as reaching it). A branch-free scan the compiler vectorises.
            var outside: UInt32 = 0
            for i in 0..<count { outside |= abs(samples[i]) <= knee ? 0 : 1 }
            if outside == 0 { return 0 }
        }
        var changed = 0
        let headroom = ceiling - knee
        for i in 0..<count {
            var x = samples[i]
            if !x.isFinite { x = 0 }
            let magnitude = abs(x)
            let target: Float = magnitude > knee ? knee / magnitude : 1
            g += (target < g ? attack : release) * (target - g)
            var y = x * g
            let m = abs(y)
            if m > knee {
                // tanhf is libm, which the compiler cannot look into (no locks, no allocation).
                var t: Float = 0
                _unsafePerformance { t = tanhf((m - knee) / headroom) }
                y = Float(signOf: y, magnitudeOf: min(ceiling, knee + headroom * t))
            }
            if g < 0.9999 || m > knee { changed &+= 1 }
            samples[i] = y
        }
        // Near 1 the release step release * (1 - g) falls under half a Float ulp and g stops
        // moving (at 1 - 7e-5 for 48 kHz), so snap to 1 once the step is that small: a jump
        // of under 0.01 dB, after which the fast path applies again.
        gain = (1 - g) * release < 0x1p-24 ? 1 : g
        return changed
    }
}
