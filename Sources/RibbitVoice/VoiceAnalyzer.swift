import Glibc

/// The microphone's voice analysis: mono samples in, one `VoiceFrame` per 10 ms hop out.
/// Pure (no I/O, no Foundation); the daemon runs it on the control side from the dump tap.
///
/// PLACEHOLDER (level only) until the pitch and voicing analysis lands.
public struct VoiceAnalyzer: Sendable {
    public static let hopSeconds = 0.01
    public let sampleRate: Double
    /// The microphone's dB SPL at 0 dBFS (nil: uncalibrated, levels in dBFS).
    public let dBSPLAtZeroDBFS: Double?
    private let hop: Int
    private var pending: [Float] = []
    private var hops = 0

    public init(sampleRate: Double, dBSPLAtZeroDBFS: Double? = nil) {
        self.sampleRate = sampleRate
        self.dBSPLAtZeroDBFS = dBSPLAtZeroDBFS
        hop = Int((sampleRate * Self.hopSeconds).rounded())
    }

    public mutating func append(_ samples: [Float]) -> [VoiceFrame] {
        pending += samples
        var frames: [VoiceFrame] = []
        while pending.count >= hop {
            var sum = 0.0
            for sample in pending[0..<hop] { sum += Double(sample) * Double(sample) }
            pending.removeFirst(hop)
            hops += 1
            let rms = (sum / Double(hop)).squareRoot()
            let dBFS = rms > 0 ? max(20 * log10(rms) + 3.0103, VoiceFrame.floorDB) : VoiceFrame.floorDB
            frames.append(
                VoiceFrame(
                    time: Double(hops) * Self.hopSeconds, levelDB: dBFS + (dBSPLAtZeroDBFS ?? 0), calibrated: dBSPLAtZeroDBFS != nil,
                    clarity: 0, voiced: false, f0Hz: nil))
        }
        return frames
    }
}
