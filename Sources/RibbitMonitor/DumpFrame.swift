import Glibc
import RibbitControl

/// One line of the dump stream (docs/dump-format.md): per ear what came in, what went out, the
/// gain asked for and the gain applied, and the prescription behind it. The daemon sends 20 a
/// second; `ribbitd process --dump` writes one per 50 ms of the file.
public struct DumpFrame: Codable, Sendable, Equatable {
    /// The daemon's frame interval (20 a second); also the hop of `process --dump`.
    public static let intervalSeconds = 0.05

    public struct AudiogramPoint: Codable, Sendable, Equatable {
        public var frequencyHz: Int
        public var thresholdDBHL: Int
        /// No response at `thresholdDBHL`, the level tested (`8000=90nr`); in JSON only when true.
        public var noResponse: Bool

        public init(frequencyHz: Int, thresholdDBHL: Int, noResponse: Bool = false) {
            self.frequencyHz = frequencyHz
            self.thresholdDBHL = thresholdDBHL
            self.noResponse = noResponse
        }

        private enum CodingKeys: String, CodingKey { case frequencyHz, noResponse, thresholdDBHL }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            frequencyHz = try c.decode(Int.self, forKey: .frequencyHz)
            thresholdDBHL = try c.decode(Int.self, forKey: .thresholdDBHL)
            noResponse = try c.decodeIfPresent(Bool.self, forKey: .noResponse) ?? false
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(frequencyHz, forKey: .frequencyHz)
            if noResponse { try c.encode(true, forKey: .noResponse) }
            try c.encode(thresholdDBHL, forKey: .thresholdDBHL)
        }
    }

    /// One ear: what the analyser measured and what the fitting asks for and applies, each
    /// declared once (`EarDump`, `EarGains`) and read here as if they were this struct's own
    /// fields (`ear.inputRMSDB`, `ear.targetGainDB`). The JSON is one flat object of all of them.
    @dynamicMemberLookup
    public struct Ear: Codable, Sendable, Equatable {
        /// Levels, bands and spectra of input and output (`EarDump`).
        public var measured: EarDump
        /// Target gain per band, combination window and applied gain per bin (`EarGains`).
        public var gains: EarGains
        /// The thresholds the prescription was fitted to (empty for explicit gains or bypass).
        public var audiogram: [AudiogramPoint]

        /// - Parameters:
        ///   - thresholds: dB HL per frequency (Hz) of the ear's audiogram.
        ///   - noResponse: the frequencies among them that got no response at that level.
        public init(dump: EarDump, gains: EarGains, thresholds: [Int: Int], noResponse: Set<Int> = []) {
            measured = dump
            self.gains = gains
            audiogram = thresholds.sorted { $0.key < $1.key }.map {
                AudiogramPoint(frequencyHz: $0.key, thresholdDBHL: $0.value, noResponse: noResponse.contains($0.key))
            }
        }

        public subscript<T>(dynamicMember field: WritableKeyPath<EarDump, T>) -> T {
            get { measured[keyPath: field] }
            set { measured[keyPath: field] = newValue }
        }

        public subscript<T>(dynamicMember field: WritableKeyPath<EarGains, T>) -> T {
            get { gains[keyPath: field] }
            set { gains[keyPath: field] = newValue }
        }

        private enum CodingKeys: String, CodingKey { case audiogram }

        // The three parts share one JSON object (keyed containers of one encoder merge).
        public init(from decoder: any Decoder) throws {
            measured = try EarDump(from: decoder)
            gains = try EarGains(from: decoder)
            audiogram = try decoder.container(keyedBy: CodingKeys.self).decode([AudiogramPoint].self, forKey: .audiogram)
        }

        public func encode(to encoder: any Encoder) throws {
            try measured.encode(to: encoder)
            try gains.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(audiogram, forKey: .audiogram)
        }
    }

    /// Seconds since the daemon started (`process --dump`: since the file's start), at the end
    /// of the samples analysed.
    public var time: Double
    public var sampleRate: Int
    /// What ribbit adds between input and output, frames.
    public var latencyFrames: Int
    /// xruns of the current JACK connection (0 for a file), counted when the frame's newest
    /// samples left the audio process (JACK reports an xrun a little after its cycle).
    public var xruns: Int
    public var output: DaemonStatus.Output
    /// nil: none loaded, sound passes unchanged.
    public var prescription: DaemonStatus.ActivePrescription?
    /// Third-octave band centres, Hz (125 to 8000).
    public var bandsHz: [Double]
    /// Bin spacing of the spectrum arrays, Hz.
    public var spectrumBinHz: Double
    /// Output samples (both ears) the ceiling changed since the previous frame.
    public var limitedSamples: Int
    /// Sample frames the audio thread could not hand over since this listener joined (ring full).
    public var droppedFrames: Int
    /// "left" and/or "right".
    public var ears: [String: Ear]
    /// The calibration the levels convert through (nil in frames from before it existed).
    public var calibration: DaemonStatus.Calibration?

    /// What to add to an ear's dBFS RMS levels (`inputRMSDB`, the bands) for dB SPL, input and
    /// output: the dump reads a full-scale sine as -3.01 dB RMS, the calibration gives the
    /// SPL of that sine. nil without a calibration.
    public func dBSPLOffsets(ear: String) -> (input: Double, output: Double)? {
        guard let calibration else { return nil }
        let sine = 10 * log10(2.0)
        let output = ear == "right" ? calibration.outputRightDBSPL : calibration.outputLeftDBSPL
        return (sine + calibration.inputDBSPL, sine + output)
    }

    public init(
        time: Double, sampleRate: Int, latencyFrames: Int, xruns: Int, output: DaemonStatus.Output,
        prescription: DaemonStatus.ActivePrescription?, limitedSamples: Int, droppedFrames: Int, ears: [String: Ear],
        calibration: DaemonStatus.Calibration? = nil
    ) {
        self.calibration = calibration
        self.time = time
        self.sampleRate = sampleRate
        self.latencyFrames = latencyFrames
        self.xruns = xruns
        self.output = output
        self.prescription = prescription
        bandsHz = DumpAnalyzer.bandCentersHz
        spectrumBinHz = DumpAnalyzer.spectrumBinHz(sampleRate: Double(sampleRate))
        self.limitedSamples = limitedSamples
        self.droppedFrames = droppedFrames
        self.ears = ears
    }
}
