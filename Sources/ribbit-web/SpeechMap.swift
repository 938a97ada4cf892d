import Foundation
import RibbitFitting
import RibbitPrescription
import RibbitStore

/// What the Live screen draws over the sound when its levels are in dB SPL, as a SpeechMap
/// does: the active prescription's thresholds and UCLs in dB SPL, converted with the
/// reference its UCLs convert with (the headphones `ucl-transducer` names, or ISO 389-7's
/// free-field thresholds), and each compressor band's output limit (/api/speechmap).
struct SpeechMap: Encodable {
    struct EarMap: Encodable {
        /// dB SPL by audiometric frequency (Hz), and the frequencies heard at no level played.
        var thresholdsDBSPL: [String: Double]
        var noResponseHz: [Int]
        /// nil without measured UCLs.
        var uclDBSPL: [String: Double]?
        /// Per compressor band: its centre (Hz) and output limit (dB SPL).
        var limits: [Limit]
    }
    struct Limit: Encodable {
        var centreHz: Double
        var dBSPL: Double
    }

    var prescription: String
    /// The reference frame, as a person reads it (the output limit is the prescription's own:
    /// it converts UCLs without named headphones with ISO 389-7, lower, so it lies lower).
    var reference: String
    var ears: [String: EarMap]

    init(_ rx: Prescription, trusted: Bool) {
        func round1(_ x: Double) -> Double { (x * 10).rounded() / 10 + 0 }
        let headphones = rx.uclTransducer ?? .tdh39
        let retspl = RETSPLTable.standard(headphones).dBSPLAtZeroHL
        func toSPL(_ levels: [Int: Int]) -> [String: Double] {
            Dictionary(
                uniqueKeysWithValues: levels.map {
                    (String($0.key), round1(Double($0.value) + Camfit.interpolate(retspl, atHz: Double($0.key))))
                })
        }
        prescription = "\(rx.name) (\(rx.environment))"
        reference =
            "dB HL + the RETSPL of \(headphones.referenceName)"
            + (rx.uclTransducer == nil
                ? ", the audiometer's usual earphone (the prescription names none)" : ", as the prescription names them")
        var ears = [String: EarMap]()
        for ear in Ear.allCases {
            guard let thresholds = rx.thresholds[ear], let settings = CompressorFitting.settings(rx, ear: ear, trusted: trusted) else {
                continue
            }
            ears[ear.rawValue] = EarMap(
                thresholdsDBSPL: toSPL(thresholds), noResponseHz: (rx.noResponse[ear] ?? []).sorted(), uclDBSPL: rx.ucl[ear].map(toSPL),
                limits: settings.bands.map { Limit(centreHz: $0.centreHz, dBSPL: round1($0.limitDBSPL)) })
        }
        self.ears = ears
    }
}

extension HistoryBridge {
    /// The SpeechMap of the prescription the daemon plays (`id` from its status).
    func speechMap(id: Int64) async -> Result<SpeechMap, Failure> {
        await run { store in
            guard let record = try? store.find(String(id)), record.id == id,
                let rx = try? Prescription.parse(Array(record.intactPayload().utf8))
            else { return .failure(.notFound("the prescription playing (history entry \(id)) cannot be read")) }
            return .success(SpeechMap(rx, trusted: record.isTrusted))
        }
    }
}
