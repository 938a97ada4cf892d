import RibbitRealtime

/// Frame, FFT and hop sizes of the overlap-save engine.
///
/// Each hop the engine transforms the newest `fftLength` input samples, multiplies by the
/// filter spectrum, transforms back and keeps the last `hopSize` outputs. Those outputs are an
/// exact linear convolution as long as fftLength >= hopSize + filterLength - 1, which `validate`
/// enforces. The filter is linear phase, so the engine delays by (filterLength - 1) / 2.
public struct EngineGeometry: Sendable, Equatable, CustomStringConvertible {
    public var fftLength: Int
    public var hopSize: Int
    public var filterLength: Int

    public init(fftLength: Int, hopSize: Int, filterLength: Int) {
        self.fftLength = fftLength
        self.hopSize = hopSize
        self.filterLength = filterLength
    }

    /// The longest filter that fits: fftLength - hopSize + 1, made odd.
    public init(fftLength: Int, hopSize: Int) {
        let longest = fftLength - hopSize + 1
        self.init(fftLength: fftLength, hopSize: hopSize, filterLength: longest % 2 == 1 ? longest : longest - 1)
    }

    /// The default at a sample rate: about 2 ms of filter delay, a 64-sample hop at 44.1/48 kHz.
    public static func standard(sampleRate: Double) -> EngineGeometry {
        let hop = sampleRate <= 48000 ? 64 : sampleRate <= 96000 ? 128 : 256
        return EngineGeometry(fftLength: 4 * hop, hopSize: hop)
    }

    /// The filter's group delay in samples.
    public var filterDelayFrames: Int { (filterLength - 1) / 2 }

    /// Extra delay the hop buffering adds when the host calls with `blockSize` frames each time
    /// (nil: any size). A hop completes only every `hopSize` samples, so the output is held back
    /// by the largest remainder (t + blockSize) mod hopSize can take: hopSize - gcd(blockSize,
    /// hopSize), which is 0 when the block size is a multiple of the hop.
    public func bufferingDelayFrames(blockSize: Int?) -> Int {
        BlockHopAdapter.bufferingDelayFrames(hopSize: hopSize, blockSize: blockSize)
    }

    public func latencyFrames(blockSize: Int?) -> Int {
        filterDelayFrames + bufferingDelayFrames(blockSize: blockSize)
    }

    public static let supportedSampleRates: ClosedRange<Double> = 22050...192000
    public static let maxFFTLength = 16384

    /// Throws a message in the user's terms when the sizes cannot work together.
    public func validate() throws(EngineError) {
        guard fftLength >= 16, fftLength <= Self.maxFFTLength, fftLength % 2 == 0 else {
            throw .invalidGeometry("--fft \(fftLength) must be an even number from 16 to \(Self.maxFFTLength)")
        }
        guard hopSize >= 1, hopSize < fftLength else {
            throw .invalidGeometry("--hop \(hopSize) must be from 1 to \(fftLength - 1) (below --fft)")
        }
        guard filterLength >= 1, filterLength % 2 == 1 else {
            throw .invalidGeometry("--taps \(filterLength) must be an odd number (a linear-phase filter has a middle tap)")
        }
        guard fftLength >= hopSize + filterLength - 1 else {
            throw .invalidGeometry(
                "--taps \(filterLength) does not fit: --fft \(fftLength) must be at least hop + taps - 1 = "
                    + "\(hopSize + filterLength - 1); use --taps \(EngineGeometry(fftLength: fftLength, hopSize: hopSize).filterLength) or less"
            )
        }
    }

    public var description: String { "fft \(fftLength) / hop \(hopSize) / taps \(filterLength)" }
}

public enum EngineError: Error, Equatable, CustomStringConvertible {
    case invalidGeometry(String)
    case unsupportedSampleRate(Double)
    case unsupportedChannelCount(Int)
    case filterMismatch(String)

    public var description: String {
        switch self {
        case .invalidGeometry(let message): message
        case .unsupportedSampleRate(let rate):
            "a sample rate of \(Int(rate)) Hz is not supported; use 44100, 48000 or 96000 Hz (anything from 22050 to 192000 works)"
        case .unsupportedChannelCount(let count):
            "\(count) channels is not supported; ribbit processes mono or stereo (one channel per ear)"
        case .filterMismatch(let message): message
        }
    }
}
