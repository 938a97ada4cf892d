import Glibc

/// The compressive Cambridge rule, CAMFIT (Moore, Alcantara, Stone & Glasberg 1999, "Use of a
/// loudness model for hearing aid fitting II: hearing aids with multi-channel compression",
/// Br J Audiol 33:157-170), in the form openMHA's gain rule uses it, per band:
///
/// ```
/// L65   band level of 65 dB SPL speech (international LTASS, Byrne et al. 1994)
/// Lmin  = L65 - 38            speech minima: 38 dB below the band level of 65 dB speech
/// Gmin  = HTL + RETSPL - Lmin  the gain that puts those minima at threshold
/// Gmid  = max(0, 0.48 HTL + I(f))  the linear Cambridge rule (Moore & Glasberg 1998)
/// CR    = max(1, 38 / max(38 + Gmid - Gmin, 13))
/// g(L)  = max(0, Gmin + (L - Lmin) (1 / CR - 1))     L: band input level, dB SPL
/// gX    = g(L65 + X - 65)     the gain for speech at an overall level of X dB SPL
/// ```
///
/// HTL is the threshold in dB HL interpolated at the band centre (linear in log frequency,
/// held flat beyond the measured ends). Unlike openMHA, no 100 dB SPL output cap is applied
/// here: ribbit limits each band's output separately (UCL, OTC rule, hard maximum).
public enum Camfit {
    /// The band centres ribbit's compressor uses unless told otherwise (Hz).
    public static let defaultCentresHz: [Double] = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]

    /// The speech minima lie this many dB below the band level of 65 dB SPL speech (Moore et al. 1999).
    public static let minimaDistanceDB = 38.0
    /// The smallest dynamic range (dB) the rule maps the 38 dB of speech into: CR <= 38 / 13.
    public static let minimumOutputRangeDB = 13.0
    /// Slope of the linear Cambridge rule's gain on the threshold (Moore & Glasberg 1998).
    public static let linearSlope = 0.48

    /// The linear Cambridge rule's intercepts I(f) in dB (Moore & Glasberg 1998, Br J Audiol
    /// 32:317-335; defined up to 5 kHz, its +1 dB held above, as openMHA does).
    public static let intercepts: [(hz: Double, db: Double)] = [
        (125, -11), (250, -10), (500, -8), (750, -6), (1000, 0), (1500, -1), (2000, 1), (3000, -1), (4000, 0), (5000, 1),
    ]

    /// The international long-term average speech spectrum at an overall level of 70 dB SPL,
    /// one-third-octave band levels in dB SPL (Byrne et al. 1994, J Acoust Soc Am 96:2108-2120,
    /// the values openMHA tabulates).
    public static let ltass70: [(hz: Double, db: Double)] = [
        (63, 38.6), (80, 43.5), (100, 54.4), (125, 57.7), (160, 56.8), (200, 60.2), (250, 60.3), (315, 59.0), (400, 62.1),
        (500, 62.1), (630, 60.5), (800, 56.8), (1000, 53.7), (1250, 53.0), (1600, 52.0), (2000, 48.7), (2500, 48.1),
        (3150, 46.8), (4000, 45.6), (5000, 44.5), (6300, 44.3), (8000, 43.7), (10000, 43.4), (12500, 41.3), (16000, 40.7),
    ]

    /// ISO 389-7:2005 reference threshold (dB SPL at 0 dB HL, free field, binaural; equal to the
    /// ISO 226:2003 threshold of hearing), 125 Hz to 10 kHz.
    public static let retsplISO389_7: [(hz: Double, db: Double)] = [
        (125, 22.1), (160, 17.9), (200, 14.4), (250, 11.4), (315, 8.6), (400, 6.2), (500, 4.4), (630, 3.0), (750, 2.4),
        (800, 2.2), (1000, 2.4), (1250, 3.5), (1500, 2.4), (1600, 1.7), (2000, -1.3), (2500, -4.2), (3000, -5.8),
        (3150, -6.0), (4000, -5.4), (5000, -1.5), (6000, 4.3), (6300, 6.0), (8000, 12.6), (9000, 13.9), (10000, 13.9),
    ]

    /// Linear interpolation in log frequency between the points, held flat beyond the ends.
    /// `points` ascending in frequency.
    public static func interpolate(_ points: [(hz: Double, db: Double)], atHz frequencyHz: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 0 }
        if frequencyHz <= first.hz { return first.db }
        if frequencyHz >= last.hz { return last.db }
        let upper = points.firstIndex { $0.hz >= frequencyHz }!
        let a = points[upper - 1], b = points[upper]
        let t = log(frequencyHz / a.hz) / log(b.hz / a.hz)
        return a.db + t * (b.db - a.db)
    }

    /// The same over a `frequency: dB` dictionary (an audiogram or a UCL list).
    public static func interpolate(_ values: [Int: Double], atHz frequencyHz: Double) -> Double {
        interpolate(values.keys.sorted().map { (Double($0), values[$0]!) }, atHz: frequencyHz)
    }

    /// dB HL -> dB SPL at a frequency: the ISO 389-7 reference threshold added.
    public static func retsplDB(atHz frequencyHz: Double) -> Double { interpolate(retsplISO389_7, atHz: frequencyHz) }

    /// Band edges for ascending centres: geometric means between neighbours, and the outer edges
    /// as far from the outer centres (in log frequency) as the nearest inner edge.
    public static func bandEdgesHz(centresHz c: [Double]) -> [Double] {
        guard c.count > 1 else { return c.first.map { [$0 / 2.0.squareRoot(), $0 * 2.0.squareRoot()] } ?? [] }
        var inner: [Double] = []
        for i in 1..<c.count { inner.append((c[i - 1] * c[i]).squareRoot()) }
        return [c[0] * c[0] / inner[0]] + inner + [c[c.count - 1] * c[c.count - 1] / inner[inner.count - 1]]
    }

    /// The band levels (dB SPL) of LTASS-shaped speech at `overallDBSPL`: the one-third-octave
    /// intensities summed into each band, a third-octave band split in proportion to its width
    /// (in Hz) inside the band. Third-octave edges: geometric means of neighbouring centres,
    /// 0 Hz below 63 Hz and 16000 * 2^(1/6) above 16 kHz.
    public static func speechBandLevelsDBSPL(centresHz: [Double], overallDBSPL: Double) -> [Double] {
        let edges = bandEdgesHz(centresHz: centresHz)
        var thirdEdges = [0.0]
        for i in 1..<ltass70.count { thirdEdges.append((ltass70[i - 1].hz * ltass70[i].hz).squareRoot()) }
        thirdEdges.append(16000 * pow(2, 1.0 / 6))
        return (0..<centresHz.count).map { band in
            var intensity = 0.0
            for (i, third) in ltass70.enumerated() {
                let overlap = max(0, min(edges[band + 1], thirdEdges[i + 1]) - max(edges[band], thirdEdges[i]))
                intensity += pow(10, third.db / 10) * overlap / (thirdEdges[i + 1] - thirdEdges[i])
            }
            return 10 * log10(intensity) + overallDBSPL - 70
        }
    }

    /// One band of the rule: where the speech minima are, the gain there and the ratio.
    public struct Band: Sendable, Equatable {
        public var centreHz: Double
        /// Band level of 65 dB SPL speech.
        public var speech65DBSPL: Double
        public var minimaDBSPL: Double
        public var gainAtMinimaDB: Double
        public var ratio: Double

        /// The gain (dB, >= 0) for a band input level in dB SPL.
        public func gainDB(bandLevelDBSPL level: Double) -> Double {
            max(0, gainAtMinimaDB + (level - minimaDBSPL) * (1 / ratio - 1))
        }

        /// The gain for LTASS speech at an overall level in dB SPL.
        public func gainDB(speechDBSPL overall: Double) -> Double { gainDB(bandLevelDBSPL: speech65DBSPL + overall - 65) }
    }

    /// The rule for one ear's thresholds (dB HL by audiometric frequency).
    public static func bands(thresholds: [Int: Int], centresHz: [Double] = defaultCentresHz) -> [Band] {
        let levels65 = speechBandLevelsDBSPL(centresHz: centresHz, overallDBSPL: 65)
        let htl = thresholds.mapValues(Double.init)
        return centresHz.indices.map { i in
            let f = centresHz[i]
            let h = interpolate(htl, atHz: f)
            let minima = levels65[i] - minimaDistanceDB
            let gMin = h + retsplDB(atHz: f) - minima
            let gMid = max(0, linearSlope * h + interpolate(intercepts, atHz: f))
            let ratio = max(1, minimaDistanceDB / max(minimaDistanceDB + gMid - gMin, minimumOutputRangeDB))
            return Band(centreHz: f, speech65DBSPL: levels65[i], minimaDBSPL: minima, gainAtMinimaDB: gMin, ratio: ratio)
        }
    }

    /// Gains (dB) by band centre (Hz, rounded) for speech at `speechDBSPL`.
    public static func gains(thresholds: [Int: Int], speechDBSPL: Double, centresHz: [Double] = defaultCentresHz) -> [Int: Double] {
        Dictionary(
            uniqueKeysWithValues: bands(thresholds: thresholds, centresHz: centresHz).map {
                (Int($0.centreHz.rounded()), $0.gainDB(speechDBSPL: speechDBSPL))
            })
    }
}
