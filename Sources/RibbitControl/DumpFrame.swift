import RibbitDSP

/// One line of the dump stream (docs/dump-format.md): per ear what came in, what went out, the
/// gain asked for and the gain applied, and the prescription behind it. The daemon sends 20 a
/// second; `ribbitd process --dump` writes one per 50 ms of the file.
public struct DumpFrame: Codable, Sendable, Equatable {
    /// The daemon's frame interval (20 a second); also the hop of `process --dump`.
    public static let intervalSeconds = 0.05

    public struct AudiogramPoint: Codable, Sendable, Equatable {
        public var frequencyHz: Int
        public var thresholdDBHL: Int
        public init(frequencyHz: Int, thresholdDBHL: Int) {
            self.frequencyHz = frequencyHz
            self.thresholdDBHL = thresholdDBHL
        }
    }

    public struct Ear: Codable, Sendable, Equatable {
        /// RMS and peak of the samples since the previous frame, dBFS (a full-scale sine: -3.01 RMS, 0 peak).
        public var inputRMSDB: Double
        public var inputPeakDB: Double
        public var outputRMSDB: Double
        public var outputPeakDB: Double
        /// Level in each third-octave band of `bandsHz`, dBFS, over the last 4096 samples.
        public var inputBandsDB: [Double]
        public var outputBandsDB: [Double]
        /// The prescription's target gain at each band centre, dB (null: the low-pass stops it).
        public var targetGainDB: [Double?]
        /// Level per bin of a 1024-point spectrum (spacing `spectrumBinHz`, from 0 Hz), dBFS.
        public var inputSpectrumDB: [Double]
        public var outputSpectrumDB: [Double]
        /// The active combination window (gain window times low-pass) per spectrum bin, dB (null: 0).
        public var combinationWindowDB: [Double?]
        /// The response of the filter the engine runs, per spectrum bin, dB.
        public var appliedGainDB: [Double]
        /// The thresholds the prescription was fitted to (empty for explicit gains or bypass).
        public var audiogram: [AudiogramPoint]

        /// - Parameter thresholds: dB HL per frequency (Hz) of the ear's audiogram.
        public init(dump: EarDump, gains: EarGains, thresholds: [Int: Int]) {
            inputRMSDB = dump.inputRMSDB
            inputPeakDB = dump.inputPeakDB
            outputRMSDB = dump.outputRMSDB
            outputPeakDB = dump.outputPeakDB
            inputBandsDB = dump.inputBandsDB
            outputBandsDB = dump.outputBandsDB
            inputSpectrumDB = dump.inputSpectrumDB
            outputSpectrumDB = dump.outputSpectrumDB
            targetGainDB = gains.targetBandsDB
            combinationWindowDB = gains.combinationWindowDB
            appliedGainDB = gains.appliedGainDB
            audiogram = thresholds.sorted { $0.key < $1.key }.map { AudiogramPoint(frequencyHz: $0.key, thresholdDBHL: $0.value) }
        }
    }

    /// Seconds since the daemon started (`process --dump`: since the file's start), at the end
    /// of the samples analysed.
    public var time: Double
    public var sampleRate: Int
    /// What ribbit adds between input and output, frames.
    public var latencyFrames: Int
    /// xruns of the current JACK connection (0 for a file).
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

    public init(
        time: Double, sampleRate: Int, latencyFrames: Int, xruns: Int, output: DaemonStatus.Output,
        prescription: DaemonStatus.ActivePrescription?, limitedSamples: Int, droppedFrames: Int, ears: [String: Ear]
    ) {
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
