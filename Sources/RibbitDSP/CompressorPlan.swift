import Glibc

/// The compressor as the daemon designs it and the audio process runs it: per channel the
/// settings and the band filters, and the calibration. Plain values, so it crosses the link
/// to `ribbit-audio`, where `CompressorConfig(plan:...)` only builds the tables.
public struct CompressorPlan: Sendable, Equatable {
    /// Per channel, the bands (the same centres in every channel) and the detector's times.
    public var settings: [CompressorSettings]
    /// [channel][band]: symmetric FIRs of the engine's filter length; per channel they sum to
    /// the channel's linear filter.
    public var bandTaps: [[[Double]]]
    public var calibration: Calibration
    /// The narrowest crossover the band filters were designed with (the detector uses it too).
    public var transitionHz: Double
    /// Per-band noise reduction on top of the bands' gains (the program's strength).
    public var noiseReduction: NoiseReductionSettings
    /// Per channel, frequency lowering or nil (empty: no channel is lowered, as before lowering
    /// existed). A lowered channel's `bandTaps` carry only what stays in place.
    public var lowering: [LoweringPlan?]
    /// The wearer's volume the plan plays at: the engine's trim on every band (`start`, or
    /// `OverlapSaveEngine.setTrim`), held under each band's `maximumGainDB`. Not part of the
    /// design, so not on the link: the daemon sends a volume step alone (`AudioMessage.trim`).
    public var trimDB: Double

    public init(
        settings: [CompressorSettings], bandTaps: [[[Double]]], calibration: Calibration, transitionHz: Double,
        noiseReduction: NoiseReductionSettings = .off, lowering: [LoweringPlan?] = [], trimDB: Double = 0
    ) {
        self.settings = settings
        self.bandTaps = bandTaps
        self.calibration = calibration
        self.transitionHz = transitionHz
        self.noiseReduction = noiseReduction
        self.lowering = lowering
        self.trimDB = trimDB
    }

    /// The highest output limit (dB SPL) of any band of `channel`: no steady output of that ear
    /// is meant to exceed it.
    public func loudestLimitDBSPL(channel: Int) -> Double { settings[channel].bands.map(\.limitDBSPL).max() ?? 200 }
}

extension OverlapSaveEngine {
    /// The engine for a fitting's design, the one way it is assembled: the linear filters (under
    /// their ceiling) and, when given, the compressor that replaces them, at its trim from the
    /// first hop. The audio process starts on the filters alone and publishes the compressor
    /// when it comes (`publish(_:)` of a plan); a file or a test box starts with both. Plans:
    /// the measured ones the wisdom knows, else estimated (timing them, 100 ms at fft 256,
    /// never repays a file's or a test box's seconds, and would hold JACK's ports back).
    public convenience init(
        playing filters: FilterSet, compressor: CompressorPlan?, geometry: EngineGeometry, sampleRate: Double, blockSize: Int?,
        fftPlanning: RealFFT.Planning = .wisdomOrEstimate
    ) throws(EngineError) {
        try self.init(geometry: geometry, sampleRate: sampleRate, filters: filters, blockSize: blockSize, fftPlanning: fftPlanning)
        if let compressor { try start(compressor) }
    }

    /// Runs `plan` at its trim from the first hop: for an engine that has not processed yet
    /// (a file, a test box).
    public func start(_ plan: CompressorPlan) throws(EngineError) {
        try publish(plan: plan)
        startAtTrim(dB: plan.trimDB)
    }

    /// Hands the compressor `plan` describes to the audio thread (its tables built here, off
    /// it); nil: back to the linear filters.
    public func publish(plan: CompressorPlan?) throws(EngineError) {
        try publish(
            plan.map { CompressorConfig(plan: $0, fftLength: geometry.fftLength, hopSize: geometry.hopSize, sampleRate: sampleRate) }
                ?? .off(channelCount: channelCount, fftLength: geometry.fftLength))
    }
}

extension CompressorConfig {
    /// The tables for a plan designed elsewhere (the daemon's `Fitting`), at the engine's geometry.
    public convenience init(plan: CompressorPlan, fftLength: Int, hopSize: Int, sampleRate: Double) {
        self.init(
            settings: plan.settings, bandTaps: plan.bandTaps, calibration: plan.calibration, fftLength: fftLength, hopSize: hopSize,
            sampleRate: sampleRate, transitionHz: plan.transitionHz, noiseReduction: plan.noiseReduction, lowering: plan.lowering)
    }

    /// What this config runs, as a plan (for the link and for tests).
    public var plan: CompressorPlan {
        CompressorPlan(
            settings: settings, bandTaps: bandTaps, calibration: calibration, transitionHz: transitionHz, noiseReduction: noiseReduction,
            lowering: lowering)
    }
}

/// What the compressor's detectors heard, as running totals the audio thread adds to every hop
/// and the control side reads through a seqlock (`OverlapSaveEngine.inputLevelTotals`): per
/// channel and band the detector's calibrated power (level = inputDBSPLAtFullScale + 10 log10
/// of its mean), and the broadband power the same way. Differences of two readings give the
/// mean over the time between them (the automatic program's 100 ms frames).
public struct InputLevelTotals: BitwiseCopyable, Sendable {
    public static let channels = 2
    /// Hops added per channel (the second channel's count in `hops[1]`).
    public var hops: InlineArray<2, Int> = .init(repeating: 0)
    /// [channel * CompressorStage.maxBands + band].
    public var bandPower: InlineArray<64, Double> = .init(repeating: 0)
    public var broadbandPower: InlineArray<2, Double> = .init(repeating: 0)
    /// What the stages did, summed hop by hop like `bandPower` ([channel * maxBands + band]):
    /// the compressor's gain against its gain at the knee (dB), the `SteadyNoiseDetector`'s
    /// weight (0: the fast level rules, 1: the gain follows speech), the noise reduction's
    /// gain (dB) and how far the output limit lowered the band (dB).
    public var compressionDB: InlineArray<64, Double> = .init(repeating: 0)
    public var followingSpeech: InlineArray<64, Double> = .init(repeating: 0)
    public var noiseReductionDB: InlineArray<64, Double> = .init(repeating: 0)
    public var outputLimitDB: InlineArray<64, Double> = .init(repeating: 0)

    public init() {}

    /// What each band's stages did between `earlier` and these totals, the mean over hops and
    /// `channels`; nil when no hop was added in between.
    public func activity(since earlier: InputLevelTotals, bands: Int, channels: Int, inputDBSPLAtFullScale: Double) -> StageActivity? {
        guard let levels = meanLevels(since: earlier, bands: bands, channels: channels, inputDBSPLAtFullScale: inputDBSPLAtFullScale)
        else { return nil }
        let used = min(channels, Self.channels)
        let hopCount = hops(since: earlier, channels: used)
        func mean(_ now: InlineArray<64, Double>, _ then: InlineArray<64, Double>) -> [Double] {
            (0..<bands).map { b in
                (0..<used).reduce(0.0) { $0 + now[$1 * CompressorStage.maxBands + b] - then[$1 * CompressorStage.maxBands + b] }
                    / Double(hopCount)
            }
        }
        return StageActivity(
            inputDBSPL: levels.bands,
            compressionDB: mean(compressionDB, earlier.compressionDB),
            followingSpeech: mean(followingSpeech, earlier.followingSpeech),
            noiseReductionDB: mean(noiseReductionDB, earlier.noiseReductionDB),
            outputLimitDB: mean(outputLimitDB, earlier.outputLimitDB))
    }

    /// Mean levels (dB SPL through `inputDBSPLAtFullScale`) between `earlier` and these totals,
    /// of the power mean over `channels`; nil when no hop was added in between.
    public func meanLevels(since earlier: InputLevelTotals, bands: Int, channels: Int, inputDBSPLAtFullScale: Double)
        -> (bands: [Double], broadband: Double)?
    {
        let used = min(channels, Self.channels)
        let hopCount = hops(since: earlier, channels: used)
        guard hopCount > 0, bands <= CompressorStage.maxBands else { return nil }
        func level(_ power: Double) -> Double { inputDBSPLAtFullScale + 10 * log10(max(power / Double(hopCount), 1e-30)) }
        let bandLevels = (0..<bands).map { b in
            level(
                (0..<used).reduce(0.0) {
                    $0 + bandPower[$1 * CompressorStage.maxBands + b] - earlier.bandPower[$1 * CompressorStage.maxBands + b]
                })
        }
        let broadband = level((0..<used).reduce(0.0) { $0 + broadbandPower[$1] - earlier.broadbandPower[$1] })
        return (bandLevels, broadband)
    }

    /// Hops added to the first `channels` channels since `earlier`.
    private func hops(since earlier: InputLevelTotals, channels: Int) -> Int {
        (0..<channels).reduce(0) { $0 + hops[$1] - earlier.hops[$1] }
    }
}

/// What the compressor's stages did to each band over a stretch of time (`status`), the mean
/// over the hops and the ears.
public struct StageActivity: Equatable, Sendable {
    /// The detector's level (dB SPL of the mean power).
    public var inputDBSPL: [Double]
    /// The compressor's gain against the gain it gives a sound at the band's knee (dB): below 0
    /// where it compresses a louder sound or expands a softer one.
    public var compressionDB: [Double]
    /// The share of the time (0 to 1) the band's gain followed speech over steady noise
    /// (`SteadyNoiseDetector`).
    public var followingSpeech: [Double]
    /// The noise reduction's gain (dB, 0 or below; 0 without noise reduction).
    public var noiseReductionDB: [Double]
    /// How far the output limit on the combined output lowered the band (dB, 0 or below).
    public var outputLimitDB: [Double]

    public init(
        inputDBSPL: [Double], compressionDB: [Double], followingSpeech: [Double], noiseReductionDB: [Double], outputLimitDB: [Double]
    ) {
        self.inputDBSPL = inputDBSPL
        self.compressionDB = compressionDB
        self.followingSpeech = followingSpeech
        self.noiseReductionDB = noiseReductionDB
        self.outputLimitDB = outputLimitDB
    }
}
