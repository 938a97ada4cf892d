import RibbitDSP
import RibbitPrescription

/// What holds a band's gain below its rule's target.
public enum GainCap: String, Sendable, Codable, CaseIterable {
    /// `Prescription.maxGainDB`: with the microphone a hand's width from the ear, more gain than
    /// this whistles (acoustic feedback) with all but closed headphones and lifts the
    /// microphone's own noise into hearing (docs/prescription-format.md, "Maximum gain"); or
    /// less, the calibration profile's `max-gain` for open headphones.
    case maximumGain = "maximum gain"
    /// `Calibration.maximumDigitalGainDB` through the calibration: this microphone and these
    /// headphones need more digital gain for the target than ribbit gives any band.
    case digitalGain = "digital gain"
    /// The band's output limit in dB SPL (UCL, `limit:`, the OTC rule): loud speech would
    /// play above it.
    case outputLimit = "output limit"
}

/// The most insertion gain ribbit plays in a band of one channel, and which bound sets it.
public enum GainMaximum {
    /// The smaller of `Prescription.maxGainDB` (or the headphones' `max-gain`, when lower) and
    /// the insertion gain that gives `Calibration.maximumDigitalGainDB` of digital gain at `hz`
    /// through `calibration`.
    public static func db(calibration: Calibration, channel: Int, atHz hz: Double) -> (db: Double, cap: GainCap) {
        let digital = Calibration.maximumDigitalGainDB - calibration.digitalGainDB(insertionGainDB: 0, channel: channel, atHz: hz)
        let maximum = headphonesDB(calibration)
        return digital < maximum ? (digital, .digitalGain) : (maximum, .maximumGain)
    }

    /// Ribbit's maximum insertion gain for these headphones: `Prescription.maxGainDB`, or the
    /// profile's `max-gain` when that is lower.
    public static func headphonesDB(_ calibration: Calibration) -> Double {
        min(calibration.maximumGainDB ?? Prescription.maxGainDB, Prescription.maxGainDB)
    }
}

/// One band of a fitting for steady LTASS speech at 50, 65 and 80 dB SPL: the gain the rule
/// asks for, the gain ribbit plays, and what held it back where they differ.
public struct BandDelivery: Sendable, Equatable, Encodable {
    /// Overall speech levels, dB SPL: soft, average, loud (fitting software's three targets).
    public static let speechLevelsDBSPL = [50.0, 65, 80]
    public var centreHz: Double
    /// Insertion gains in dB at `speechLevelsDBSPL`.
    public var targetDB: [Double]
    public var deliveredDB: [Double]
    /// nil where the band plays its target (within 0.05 dB).
    public var cappedBy: [GainCap?]

    /// The largest target - delivered over the three levels, dB (0 when none is short).
    public var shortfallDB: Double { max(0, zip(targetDB, deliveredDB).map { $0 - $1 }.max() ?? 0) }
}

extension CompressorFitting {
    /// Per band, target and delivered gain for one ear played through `channel` of
    /// `calibration`; nil for an ear the prescription leaves out. The one computation behind every
    /// shortfall ribbit shows (`rx show`, `status`, the web app, `audiogram fit`): what plays is
    /// `settings` (capped at `Prescription.maxGainDB`) capped again by `GainMaximum`, as
    /// `Fitting.compressorPlan` plays it at volume 0; the target is the rule's curve with no
    /// maximum and no output limit.
    public static func delivery(
        _ rx: Prescription, ear: Ear, trusted: Bool, calibration: Calibration = .uncalibrated, channel: Int? = nil
    ) -> [BandDelivery]? {
        guard let wished = settings(rx, ear: ear, trusted: trusted, maximumDB: nil),
            let played = settings(rx, ear: ear, trusted: trusted)
        else { return nil }
        let channel = channel ?? (ear == .left ? 0 : 1)
        let levels = BandDelivery.speechLevelsDBSPL.map {
            Camfit.speechBandLevelsDBSPL(centresHz: played.bands.map(\.centreHz), overallDBSPL: $0)
        }
        return played.bands.indices.map { i in
            var target = wished.bands[i]
            target.limitDBSPL = 200
            let maximum = GainMaximum.db(calibration: calibration, channel: channel, atHz: played.bands[i].centreHz)
            let delivered = played.bands[i].capped(atDB: maximum.db)
            var unlimited = delivered
            unlimited.limitDBSPL = 200
            var band = BandDelivery(centreHz: played.bands[i].centreHz, targetDB: [], deliveredDB: [], cappedBy: [])
            for level in levels {
                let (wish, gain, capped) = (
                    target.gainDB(inputDBSPL: level[i]), delivered.gainDB(inputDBSPL: level[i]), unlimited.gainDB(inputDBSPL: level[i])
                )
                band.targetDB.append(wish)
                band.deliveredDB.append(gain)
                band.cappedBy.append(gain >= wish - 0.05 ? nil : gain < capped - 0.05 ? .outputLimit : maximum.cap)
            }
            return band
        }
    }
}

extension CompressorFitting {
    /// `delivery` for each ear the prescription fits (what `ClinicalNote.text` reads).
    public static func deliveries(_ rx: Prescription, trusted: Bool, calibration: Calibration = .uncalibrated) -> [Ear: [BandDelivery]] {
        Dictionary(
            uniqueKeysWithValues: Ear.allCases.compactMap { ear in
                delivery(rx, ear: ear, trusted: trusted, calibration: calibration).map { (ear, $0) }
            })
    }

    /// The bands short of target for soft speech (50 dB SPL, where the gain is largest), right
    /// ear first: "right 6000 Hz +66.0 -> +50.0 dB (maximum gain), ..."; nil when none is.
    public static func shortfallSummary(_ rx: Prescription, trusted: Bool = false, calibration: Calibration = .uncalibrated) -> String? {
        let parts = [Ear.right, .left].flatMap { ear in
            (delivery(rx, ear: ear, trusted: trusted, calibration: calibration) ?? []).compactMap { band -> String? in
                guard band.shortfallDB >= 0.05,
                    let worst = band.cappedBy.indices.max(by: {
                        band.targetDB[$0] - band.deliveredDB[$0] < band.targetDB[$1] - band.deliveredDB[$1]
                    })
                else { return nil }
                func db(_ x: Double) -> String { (x >= 0 ? "+" : "") + String(format: "%.1f", x) }
                return "\(ear.rawValue) \(Int(band.centreHz)) Hz \(db(band.targetDB[worst])) -> \(db(band.deliveredDB[worst])) dB"
                    + " at \(Int(BandDelivery.speechLevelsDBSPL[worst])) dB SPL (\(band.cappedBy[worst]?.rawValue ?? ""))"
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}
