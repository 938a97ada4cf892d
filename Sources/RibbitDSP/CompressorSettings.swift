import Glibc

/// The wide dynamic range compressor's settings: the contract between the fitting (which turns
/// a prescription into them) and the engine's compressor stage (which runs them). Levels are
/// band levels in dB SPL through the `Calibration`; gains are insertion gains in dB.
///
/// A band's static curve on its input level L (dB SPL), as hearing-aid fitting software draws it:
///
/// ```
/// gain(L) = gainDB - (expansionKneeDBSPL - L) * (expansionRatio - 1)   L < expansion knee
///         = gainDB                                                     between the knees
///         = gainDB - (L - kneeDBSPL) * (1 - 1 / ratio)                 L > knee
/// and never more than limitDBSPL - L (the band's output limit).
/// ```
///
/// The wearer's volume trims it at run time (`OverlapSaveEngine.setTrim`): the trim adds to
/// `gainDB`, and above the expansion knee the gain is then held to `maximumGainDB` (the most
/// the aid may give this band at any level), so a volume step needs no new design and never
/// lifts a band past its maximum; below the expansion knee the expander lowers that further.
public struct CompressorBand: Sendable, Hashable {
    /// Where the band is centred (its level detector and its share of the filter).
    public var centreHz: Double
    /// Insertion gain between the two knees.
    public var gainDB: Double
    /// Compression threshold: band input level above which the ratio applies.
    public var kneeDBSPL: Double
    /// Compression ratio, >= 1 (1: linear): above the knee the output grows 1 / ratio dB per dB.
    public var ratio: Double
    /// Below this band input level the expander lowers the gain (microphone hiss, room noise).
    public var expansionKneeDBSPL: Double
    /// Expansion ratio, >= 1 (1: none): below the knee the output falls this many dB per dB.
    public var expansionRatio: Double
    /// The band's output never exceeds this level (steady state; the dBFS ceiling still holds
    /// on every sample).
    public var limitDBSPL: Double
    /// The most gain the band gives at any level, whatever the trim (infinity: no maximum).
    public var maximumGainDB: Double
    /// A noise floor above this band level (dB SPL, as the detector reads it) is noise that
    /// matters: there the ear's `SteadyNoiseDetector` takes over (infinity: never).
    public var steadyNoiseKneeDBSPL: Double

    public init(
        centreHz: Double, gainDB: Double, kneeDBSPL: Double, ratio: Double, expansionKneeDBSPL: Double, expansionRatio: Double,
        limitDBSPL: Double, maximumGainDB: Double = .infinity, steadyNoiseKneeDBSPL: Double = .infinity
    ) {
        self.steadyNoiseKneeDBSPL = steadyNoiseKneeDBSPL
        self.centreHz = centreHz
        self.gainDB = gainDB
        self.kneeDBSPL = kneeDBSPL
        self.ratio = ratio
        self.expansionKneeDBSPL = expansionKneeDBSPL
        self.expansionRatio = expansionRatio
        self.limitDBSPL = limitDBSPL
        self.maximumGainDB = maximumGainDB
    }

    /// A band that only amplifies: the same gain at every level, no limit below 200 dB SPL.
    public static func linear(centreHz: Double, gainDB: Double) -> CompressorBand {
        CompressorBand(
            centreHz: centreHz, gainDB: gainDB, kneeDBSPL: 200, ratio: 1, expansionKneeDBSPL: -100, expansionRatio: 1, limitDBSPL: 200)
    }

    /// The static curve: insertion gain in dB for a steady band input level in dB SPL.
    public func gainDB(inputDBSPL level: Double, trimDB: Double = 0) -> Double {
        var gain = gainDB + trimDB
        if level < expansionKneeDBSPL {
            gain = min(gain, maximumGainDB) - (expansionKneeDBSPL - level) * (expansionRatio - 1)
        } else {
            if level > kneeDBSPL { gain -= (level - kneeDBSPL) * (1 - 1 / ratio) }
            gain = min(gain, maximumGainDB)
        }
        return min(gain, limitDBSPL - level)
    }

    /// The same band with at most `maximumDB` of gain at any level: a compressing band's knee
    /// moves up to where its curve falls to the maximum, so the curve is flat at the maximum
    /// below that level and the prescribed one above it (min(curve, maximum) at every level
    /// down to the expansion knee, and lower still below it); a linear band's gain is lowered.
    public func capped(atDB maximumDB: Double) -> CompressorBand {
        guard gainDB > maximumDB else { return self }
        var band = self
        band.gainDB = maximumDB
        if ratio > 1 { band.kneeDBSPL = min(kneeDBSPL + (gainDB - maximumDB) / (1 - 1 / ratio), 200) }
        return band
    }
}

/// Per ear, the bands and how fast their level detectors follow.
public struct CompressorSettings: Sendable, Hashable {
    /// Ascending centre frequencies.
    public var bands: [CompressorBand]
    /// ANSI S3.22 attack time (settling within 3 dB after a 55 -> 90 dB SPL step).
    public var attackMs: Double
    /// ANSI S3.22 release time (settling within 4 dB after a 90 -> 55 dB SPL step).
    public var releaseMs: Double
    /// How the detectors follow speech rather than noise where a band's noise floor matters
    /// (nil: the prescribed times everywhere, as a test box measures).
    public var steadyNoise: SteadyNoiseDetector?

    public init(bands: [CompressorBand], attackMs: Double, releaseMs: Double, steadyNoise: SteadyNoiseDetector? = nil) {
        self.bands = bands
        self.attackMs = attackMs
        self.releaseMs = releaseMs
        self.steadyNoise = steadyNoise
    }

    /// Speech: fast enough to follow syllables. Music: slow, so the dynamics of a piece stay.
    public static let speechTimes = (attackMs: 5.0, releaseMs: 70.0)
    public static let musicTimes = (attackMs: 50.0, releaseMs: 1000.0)
}

/// Compression that follows speech, not noise. A fast detector in steady noise reads the gaps
/// between words as soft sounds and gives them the soft-sound gain: a compressive fitting then
/// lifts the noise more than the speech and costs SNR (Naylor & Johannesson 2009; measured here,
/// CAMFIT on a moderate flat loss: 3.0 to 6.0 dB in speech-shaped noise). So each band also runs
/// a slow detector (attack = release = `slowMs`, which speech in noise holds near the mixture's
/// long-term level) and, while the band's noise floor (the noise reduction's minimum-statistics
/// tracker) stands above the band's `steadyNoiseKneeDBSPL` and within `floorWithinDB` of the
/// band's long-term power (the band is mostly noise), the gain follows
/// max(slow level, fast level - `followAboveDB`): the gaps keep the gain of the speech around
/// them, and a sound more than `followAboveDB` above that level (a door, a dropped plate) still
/// turns the gain down at the prescribed speed. The switch glides over `blendMs`; in quiet the
/// fast detector rules alone, bit for bit. (After the "dual front end" of commercial aids, and
/// May, Kowalewski & Dau 2018 on compression driven by the speech, not the noise.)
public struct SteadyNoiseDetector: Sendable, Hashable {
    public var slowMs: Double
    public var followAboveDB: Double
    public var blendMs: Double
    /// The band's long-term (1 s) power must stand within this of its noise floor: mostly
    /// noise. Speech alone has a floor far below its mean, however loud it is.
    public var floorWithinDB: Double

    public init(slowMs: Double, followAboveDB: Double, blendMs: Double, floorWithinDB: Double) {
        self.slowMs = slowMs
        self.followAboveDB = followAboveDB
        self.blendMs = blendMs
        self.floorWithinDB = floorWithinDB
    }

    /// Chosen on bench/speech-in-noise.py (README, "Speech in noise"; CAMFIT on a moderate flat
    /// loss, program quiet, at 0 / 5 / 10 dB SNR): a 1 s slow level held the gaps (slow release
    /// alone still lost 1.3 to 1.9 dB at 0 dB SNR). Babble at 10 dB SNR is the hard case: its
    /// floor stands about as far under the mixture's power as a talker's own in a quiet room.
    /// With the floor within 20 dB of the long-term power, following 20 dB above the slow level
    /// and a floor above 40 dB SPL speech's band levels it cost 1.6 dB of SNR against the same
    /// gains played linearly; within 22 dB, 25 dB above and 30 dB SPL speech
    /// (`Program.steadyNoiseSpeechDBSPL`) 0.92 (23 dB above: 0.98). Before the noise floor
    /// followed the end of a sound at once (`NoiseReductionSettings.soundEndDropDB`), within
    /// 23 dB took up to 1.05 dB of gain from the verifier's speech in quiet; now it pauses in
    /// silence and keeps its gains up to 26 (`VerifierTests`), but a soft talker in a quiet room,
    /// whose floor is the room's, stands about 20 dB above it: 22 stays. Clatter at every SNR
    /// keeps more SNR than the linear fitting.
    public static let standard = SteadyNoiseDetector(slowMs: 1000, followAboveDB: 25, blendMs: 200, floorWithinDB: 22)
}

/// From digital levels to sound pressure, per device: what the microphone and the headphones
/// do, measured by `ribbitd calibrate` or taken from a profile's documented defaults.
public struct Calibration: Sendable, Equatable {
    /// The sound pressure level (dB SPL) at the microphone of a sine that reads 0 dBFS (peak 1).
    public var inputDBSPLAtFullScale: Double
    /// Per ear (left, right), the level (dB SPL) a 0 dBFS sine plays at the ear.
    public var outputDBSPLAtFullScale: [Double]

    /// Per ear, the headphones' response re 1 kHz in dB by frequency (Hz), as `ribbitd calibrate`
    /// measured it; empty or missing: flat. Read on a log-frequency axis, flat beyond the points.
    public var outputResponseDB: [[Double: Double]]

    /// The most insertion gain these headphones take before they whistle (the profile's
    /// `max-gain`, open headphones); nil: ribbit's own maximum. Only ever lowers it.
    public var maximumGainDB: Double?

    public init(
        inputDBSPLAtFullScale: Double, outputDBSPLAtFullScale: [Double], outputResponseDB: [[Double: Double]] = [],
        maximumGainDB: Double? = nil
    ) {
        self.inputDBSPLAtFullScale = inputDBSPLAtFullScale
        self.outputDBSPLAtFullScale = outputDBSPLAtFullScale
        self.outputResponseDB = outputResponseDB
        self.maximumGainDB = maximumGainDB
    }

    /// The headphones' response of `channel` at `hz`, dB re 1 kHz (0 where nothing was measured).
    public func responseDB(channel: Int, atHz hz: Double) -> Double {
        guard channel < outputResponseDB.count, !outputResponseDB[channel].isEmpty else { return 0 }
        var points = outputResponseDB[channel]
        if points[1000] == nil { points[1000] = 0 }  // the reference itself
        let sorted = points.sorted { $0.key < $1.key }
        guard let first = sorted.first, let last = sorted.last else { return 0 }
        if hz <= first.key { return first.value }
        if hz >= last.key { return last.value }
        let upper = sorted.firstIndex { $0.key >= hz }!
        let (a, b) = (sorted[upper - 1], sorted[upper])
        return a.value + (b.value - a.value) * log(hz / a.key) / log(b.key / a.key)
    }

    /// What a 0 dBFS sine at `hz` plays at the ear of `channel`, dB SPL.
    public func outputDBSPL(channel: Int, atHz hz: Double) -> Double {
        outputDBSPLAtFullScale[channel] + responseDB(channel: channel, atHz: hz)
    }

    /// The loudest a 0 dBFS sine plays in `channel` at any frequency, dB SPL (for ceilings).
    public func loudestOutputDBSPL(channel: Int) -> Double {
        let peak = channel < outputResponseDB.count ? outputResponseDB[channel].values.max() ?? 0 : 0
        return outputDBSPLAtFullScale[channel] + max(peak, 0)
    }

    /// Input and output alike: a digital gain of G dB is an insertion gain of G dB, as the
    /// linear engine has always assumed. 100 dB SPL at 0 dBFS is typical of both a headset
    /// microphone and closed headphones at a moderate volume; uncalibrated it is only a guess.
    public static let uncalibrated = Calibration(inputDBSPLAtFullScale: 100, outputDBSPLAtFullScale: [100, 100])

    /// The most digital gain (dB, insertion gain plus input minus output level at 0 dBFS) any
    /// band gets, whatever the prescription, volume and calibration ask. A microphone's own
    /// noise sits near -90 dBFS: at 60 dB it plays at -30 dBFS, and beyond that more gain mostly
    /// amplifies the hardware's hiss (or a calibration typo) rather than the room.
    public static let maximumDigitalGainDB = 60.0

    /// The digital gain (dB) that gives `insertionGainDB` at the ear of `channel`.
    public func digitalGainDB(insertionGainDB: Double, channel: Int) -> Double {
        insertionGainDB + inputDBSPLAtFullScale - outputDBSPLAtFullScale[channel]
    }

    /// The same at `hz`, the headphones' response taken out (the microphone is taken as flat).
    public func digitalGainDB(insertionGainDB: Double, channel: Int, atHz hz: Double) -> Double {
        insertionGainDB + inputDBSPLAtFullScale - outputDBSPL(channel: channel, atHz: hz)
    }
}
