import RibbitDSP
import RibbitPrescription

/// Prescription -> the compressor's settings per ear.
///
/// Per band centre (`Camfit.defaultCentresHz` unless given) and gains g50, g80 for speech at 50
/// and 80 dB SPL (rule camfit, or explicit `g50-`/`g80-`), with L50 = the band level of
/// LTASS speech at 50 dB SPL overall (`Camfit.speechBandLevelsDBSPL`) and L80 = L50 + 30:
///
/// ```
/// gainDB = g50                  kneeDBSPL = L50
/// ratio  = 30 / max(30 + g80 - g50, 3)  (the output rises 30 + g80 - g50 dB over the 30 dB from
///                                       L50 to L80; at most 10:1)
/// ```
///
/// so the static curve passes through both prescribed points; g65 lands on the line between
/// them (camfit's own g65 differs only where it clipped a negative gain to 0). The linear rules
/// give ratio 1, knee 200 and the rule's gain at the band centre (compression off).
///
/// Output limit per band, the smallest of:
/// - the UCL (dB HL, interpolated at the centre) + the RETSPL of the headphones it was measured
///   with (`ucl-transducer`; not said: the ISO 389-7 free-field threshold) - `uclMarginDB`;
/// - the prescription's `limit:`;
/// - the US OTC hearing-aid rule (21 CFR 800.30), 111 dB SPL, or 117 dB SPL when the ear's
///   input-controlled compression is active (a band ratio above 1); only a `limit:` that a
///   trusted audiologist signed may go above it, never the signature alone
///   (`capDBSPL`), and never above `trustedMaximumDBSPL`.
public enum CompressorFitting {
    /// dB kept between the output limit and the uncomfortable loudness level.
    public static let uclMarginDB = 5.0
    public static let otcLimitDBSPL = 111.0
    public static let otcCompressionLimitDBSPL = 117.0
    /// ribbit's own ceiling for prescriptions signed by a trusted audiologist: the top of
    /// `Prescription.limitRange`, near the threshold of pain.
    public static let trustedMaximumDBSPL = Prescription.limitRange.upperBound
    public static let expansionRatio = 2.0

    /// The settings for one ear, or nil when the prescription leaves the ear out. No band gives
    /// more than `maximumDB` at any level (`CompressorBand.capped`: a rule's gain above it plays
    /// at it, never refused); nil: the rule's curve as it is, for the targets.
    public static func settings(
        _ rx: Prescription, ear: Ear, trusted: Bool, centresHz: [Double] = Camfit.defaultCentresHz,
        maximumDB: Double? = Prescription.maxGainDB
    ) -> CompressorSettings? {
        guard let linear = rx.targetGains(for: ear) else { return nil }
        let level50 = Camfit.speechBandLevelsDBSPL(centresHz: centresHz, overallDBSPL: 50)
        var bands: [CompressorBand]
        if let level = rx.levelGains(for: ear) {
            bands = centresHz.indices.map { i in
                let f = centresHz[i]
                let g50 = Camfit.interpolate(level.g50, atHz: f), g80 = min(g50, Camfit.interpolate(level.g80, atHz: f))
                return CompressorBand(
                    centreHz: f, gainDB: g50, kneeDBSPL: level50[i], ratio: 30 / max(30 + g80 - g50, 3), expansionKneeDBSPL: -100,
                    expansionRatio: 1, limitDBSPL: 200)
            }
        } else {
            bands = centresHz.map { CompressorBand.linear(centreHz: $0, gainDB: Camfit.interpolate(linear, atHz: $0)) }
        }
        let cap = capDBSPL(rx, trusted: trusted, compressing: bands.contains { $0.ratio > 1 })
        for i in bands.indices {
            var limit = cap
            if let ucl = rx.ucl[ear] {
                // dB HL as the headphones the UCL was measured with play it, in their coupler.
                let f = bands[i].centreHz
                limit = min(limit, Camfit.interpolate(ucl.mapValues(Double.init), atHz: f) + rx.uclReferenceDBSPL(atHz: f) - uclMarginDB)
            }
            bands[i].limitDBSPL = limit
            if let maximumDB { bands[i] = bands[i].capped(atDB: maximumDB) }
            let expansionKnee: Double? =
                switch rx.expansion {
                case .off: nil
                case .on: Prescription.defaultExpansionKneeDBSPL
                case .knee(let db): db
                }
            if let expansionKnee {
                // Never above the compression knee: the curve stays continuous.
                bands[i].expansionKneeDBSPL = min(expansionKnee, bands[i].kneeDBSPL)
                bands[i].expansionRatio = expansionRatio
            }
        }
        let defaults = CompressorSettings.speechTimes
        return CompressorSettings(bands: bands, attackMs: rx.attackMs ?? defaults.attackMs, releaseMs: rx.releaseMs ?? defaults.releaseMs)
    }
}

extension CompressorFitting {
    /// The highest band output limit `rx` may have: the OTC rule's (117 dB SPL with compression,
    /// else 111), lowered by its `limit:`; raised by its `limit:` only when a trusted audiologist
    /// signed it, at most `trustedMaximumDBSPL`. A signature without a `limit:` raises nothing.
    public static func capDBSPL(_ rx: Prescription, trusted: Bool, compressing: Bool) -> Double {
        let otc = compressing ? otcCompressionLimitDBSPL : otcLimitDBSPL
        guard let written = rx.limitDBSPL else { return otc }
        return min(written, trusted ? trustedMaximumDBSPL : otc)
    }

    /// Where `capDBSPL` comes from, in words for `rx show`, `status` and the web app.
    public static func capReason(_ rx: Prescription, trusted: Bool, compressing: Bool) -> String {
        let otc = compressing ? otcCompressionLimitDBSPL : otcLimitDBSPL
        let rule = "the US rule for over-the-counter hearing aids\(compressing ? " with compression" : "")"
        guard let written = rx.limitDBSPL else { return rule + "; only a limit: from a trusted audiologist raises it" }
        if written <= otc { return "the prescription's limit: \(Prescription.number(written))" }
        return trusted
            ? "the limit: \(Prescription.number(written)) from a trusted audiologist"
            : rule + "; its limit: \(Prescription.number(written)) is not from a trusted audiologist, so it cannot raise it"
    }

    /// An ear the prescription leaves out: no gain at any level, under the same output limit an
    /// unfitted ear of this prescription would get (`capDBSPL` without compression), so
    /// nothing in any channel plays louder than the rules allow.
    public static func passThrough(_ rx: Prescription, trusted: Bool, centresHz: [Double] = Camfit.defaultCentresHz) -> CompressorSettings {
        let limit = capDBSPL(rx, trusted: trusted, compressing: false)
        let bands = centresHz.map { centre in
            var band = CompressorBand.linear(centreHz: centre, gainDB: 0)
            band.limitDBSPL = limit
            return band
        }
        let times = CompressorSettings.speechTimes
        return CompressorSettings(bands: bands, attackMs: rx.attackMs ?? times.attackMs, releaseMs: rx.releaseMs ?? times.releaseMs)
    }
}

extension CompressorFitting {
    /// The sample ceiling (dBFS) for a prescription played to `ears` (channel order) through
    /// `calibration`: its max-output, and per channel the loudest band output limit less what
    /// 0 dBFS plays at (a sine peaking at the ceiling plays at that limit). Never above 0.
    public static func ceilingDBFS(_ rx: Prescription, ears: [Ear], trusted: Bool, calibration: Calibration) -> Double {
        let perChannel = ears.enumerated().map { channel, ear in
            let settings = settings(rx, ear: ear, trusted: trusted) ?? passThrough(rx, trusted: trusted)
            let limit = settings.bands.map(\.limitDBSPL).max() ?? otcLimitDBSPL
            return limit - calibration.loudestOutputDBSPL(channel: channel)
        }
        return min(rx.maxOutputDBFS, 0, perChannel.min() ?? 0)
    }

    /// The ceiling for sound that is not fitted (bypass, no prescription): the OTC limit
    /// through the louder channel's calibration, and `dBFS`. Never above 0.
    public static func unfittedCeilingDBFS(_ dBFS: Double, calibration: Calibration) -> Double {
        min(
            dBFS, 0,
            otcLimitDBSPL - (calibration.outputDBSPLAtFullScale.indices.map { calibration.loudestOutputDBSPL(channel: $0) }.max() ?? 100))
    }
}
