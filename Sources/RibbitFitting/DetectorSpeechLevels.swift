import Glibc
import RibbitDSP
import RibbitPrescription
import Synchronization

/// How much louder the compressor's detectors hear speech than the fitting rule's band levels
/// say, per band: the rules put each knee at a band level of speech (third-octave LTASS summed
/// in rectangular bands, `Camfit.speechBandLevelsDBSPL`), but a detector with a 5 ms attack
/// rides the peaks of a band power that fluctuates from hop to hop (most in the narrow low
/// bands: few FFT bins) and from syllable to syllable, and the top band, open above its centre,
/// hears speech up to 16 kHz. Uncorrected, speech was compressed as if 2-8 dB louder and
/// `ribbitd verify` read the camfit sample 1-3 dB under its targets (5 dB at 8 kHz).
///
/// Read off the real detector: `SpeechLikeSignal` at 65 dB SPL through a compressor with the
/// ear's own bands and times (the detector's time constants follow each band's curve) at the
/// engine's geometry, the detector's smoothed level after every hop from the second half second on; the offset is the power-weighted mean of that level (loud moments
/// carry the output's power, and they set its gain) less the rule's band level. `Fitting` adds
/// it to every speech-derived knee (`placed`), moving the rule's curves onto the scale the
/// detector reads. Tones are not speech: a tone at a band centre now gets the gain of speech
/// whose band level is that much lower (`verify` shows it in the input/output curves).
public enum DetectorSpeechLevels {
    public static let seed: UInt64 = 65
    public static let seconds = 3.0
    /// Offsets outside this range mean the measurement went wrong: they are held to it.
    public static let plausibleDB = -3.0...12.0

    struct Key: Hashable {
        var settings: CompressorSettings
        var geometry: [Int]
        var sampleRate: Double
    }

    /// A daemon refits on every program change and prescription switch: read each detector once.
    static let cache = Mutex<[Key: [Double]]>([:])

    /// The settings the engine runs for `settings` (one ear, from `CompressorFitting`) in
    /// `program`: the compression knees, which the rules set at band levels of speech, and the
    /// program's expansion knees (speech 10 dB below soft) moved to what the detector reads of
    /// speech. A prescription's own expansion knee is an absolute level for room noise, not
    /// speech: it stays, never above the compression knee.
    public static func placed(
        _ settings: CompressorSettings, program: Program, prescription rx: Prescription, geometry: EngineGeometry, sampleRate: Double
    ) -> CompressorSettings {
        let unplaced = program.expand(settings, prescription: rx)
        guard unplaced.bands.contains(where: { $0.ratio > 1 || $0.expansionRatio > 1 }) else { return unplaced }
        // The detector's time constants follow each band's curve (`CompressorStage.detectorTau`):
        // read it with the ear's own bands.
        let offsets = offsetsDB(unplaced, geometry: geometry, sampleRate: sampleRate)
        var shifted = settings
        for b in shifted.bands.indices where shifted.bands[b].ratio > 1 {
            shifted.bands[b].kneeDBSPL += offsets[b]
            shifted.bands[b].expansionKneeDBSPL = min(shifted.bands[b].expansionKneeDBSPL, shifted.bands[b].kneeDBSPL)
        }
        return program.expand(shifted, prescription: rx, detectorOffsetsDB: offsets)
    }

    /// The offsets (dB) for these bands and times, at this geometry.
    public static func offsetsDB(_ settings: CompressorSettings, geometry: EngineGeometry, sampleRate: Double) -> [Double] {
        let key = Key(settings: settings, geometry: [geometry.fftLength, geometry.hopSize, geometry.filterLength], sampleRate: sampleRate)
        if let known = cache.withLock({ $0[key] }) { return known }
        let offsets = measure(settings, geometry: geometry, sampleRate: sampleRate).map {
            min(max($0, plausibleDB.lowerBound), plausibleDB.upperBound)
        }
        cache.withLock { cache in
            if cache.count > 256 { cache.removeAll() }  // bounded: a wearer has few settings
            cache[key] = offsets
        }
        return offsets
    }

    static func measure(_ settings: CompressorSettings, geometry: EngineGeometry, sampleRate: Double) -> [Double] {
        let calibration = Calibration.uncalibrated
        let speechDBSPL = 65.0
        let centresHz = settings.bands.map(\.centreHz)
        let config = CompressorConfig(
            settings: [settings], amplitude: [{ _ in 1 }], calibration: calibration, taps: geometry.filterLength,
            fftLength: geometry.fftLength, hopSize: geometry.hopSize, sampleRate: sampleRate)
        var unity = [Double](repeating: 0, count: geometry.filterLength)
        unity[geometry.filterLength / 2] = 1
        let rule = Camfit.speechBandLevelsDBSPL(centresHz: centresHz, overallDBSPL: speechDBSPL)
        guard
            let engine = try? OverlapSaveEngine(
                geometry: geometry, sampleRate: sampleRate,
                filters: FilterSet(taps: [unity], fftLength: geometry.fftLength, ceilingDBFS: 0), blockSize: geometry.hopSize,
                fftPlanning: .wisdomOrEstimate),
            (try? engine.publish(config)) != nil
        else { return centresHz.map { _ in 0 } }
        let hop = geometry.hopSize
        let signal = SpeechLikeSignal.generate(
            count: Int(sampleRate * seconds), sampleRate: sampleRate, levelDBFS: speechDBSPL - calibration.inputDBSPLAtFullScale, seed: seed
        )
        let settle = Int(sampleRate / 2)
        var weighted = [Double](repeating: 0, count: centresHz.count), power = weighted
        var start = 0
        while start + hop <= signal.count {
            _ = engine.process([Array(signal[start..<(start + hop)])], blockSize: hop)
            start += hop
            guard start > settle else { continue }
            for (b, level) in engine.compressorLevels(channel: 0).enumerated() where level.isFinite {
                let p = pow(10, Double(level) / 10)
                weighted[b] += p * Double(level)
                power[b] += p
            }
        }
        return centresHz.indices.map { b in power[b] > 0 ? weighted[b] / power[b] - rule[b] : 0 }
    }
}
