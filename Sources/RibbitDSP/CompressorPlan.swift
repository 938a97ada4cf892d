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

    public init(
        settings: [CompressorSettings], bandTaps: [[[Double]]], calibration: Calibration, transitionHz: Double,
        noiseReduction: NoiseReductionSettings = .off
    ) {
        self.settings = settings
        self.bandTaps = bandTaps
        self.calibration = calibration
        self.transitionHz = transitionHz
        self.noiseReduction = noiseReduction
    }

    /// The highest output limit (dB SPL) of any band of `channel`: no steady output of that ear
    /// is meant to exceed it.
    public func loudestLimitDBSPL(channel: Int) -> Double { settings[channel].bands.map(\.limitDBSPL).max() ?? 200 }

    /// The sample ceiling (dBFS) that holds every channel under its loudest band limit through
    /// the calibration: a sine peaking there plays at that limit. At most 0 dBFS.
    public var ceilingDBFS: Double {
        settings.indices.map { loudestLimitDBSPL(channel: $0) - calibration.outputDBSPLAtFullScale[$0] }.reduce(0, min)
    }
}

extension CompressorConfig {
    /// The tables for a plan designed elsewhere (the daemon's `Fitting`), at the engine's geometry.
    public convenience init(plan: CompressorPlan, fftLength: Int, hopSize: Int, sampleRate: Double) {
        self.init(
            settings: plan.settings, bandTaps: plan.bandTaps, calibration: plan.calibration, fftLength: fftLength, hopSize: hopSize,
            sampleRate: sampleRate, transitionHz: plan.transitionHz, noiseReduction: plan.noiseReduction)
    }

    /// What this config runs, as a plan (for the link and for tests).
    public var plan: CompressorPlan {
        CompressorPlan(
            settings: settings, bandTaps: bandTaps, calibration: calibration, transitionHz: transitionHz, noiseReduction: noiseReduction)
    }
}
