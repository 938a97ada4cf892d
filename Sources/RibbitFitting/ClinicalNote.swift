import RibbitPrescription

/// What an audiologist and the wearer should know about a loss ribbit cannot fully serve: the
/// bands where average speech stays below threshold with the gain ribbit plays, and what
/// clinical guidance suggests then (a power hearing aid, a cochlear-implant assessment, or
/// frequency lowering for a steep high-frequency loss).
public enum ClinicalNote {
    /// Band centres (Hz) where LTASS speech at 65 dB SPL, with the delivered gain, has a
    /// long-term band level below the ear's threshold in dB SPL (dB HL + ISO 389-7, CAMFIT's
    /// convention): at best its peaks are heard, a band audibility under one half in the
    /// Speech Intelligibility Index's terms ((level + 15 - threshold) / 30).
    public static func inaudibleBandsHz(_ rx: Prescription, ear: Ear, delivery: [BandDelivery]) -> [Double] {
        guard let thresholds = rx.thresholds[ear], !thresholds.isEmpty else { return [] }
        let hl = thresholds.mapValues(Double.init)
        let average = BandDelivery.speechLevelsDBSPL.firstIndex(of: 65)!
        let levels = Camfit.speechBandLevelsDBSPL(centresHz: delivery.map(\.centreHz), overallDBSPL: 65)
        return delivery.indices.compactMap { i in
            let f = delivery[i].centreHz
            let threshold = Camfit.interpolate(hl, atHz: f) + Camfit.retsplDB(atHz: f)
            return levels[i] + delivery[i].deliveredDB[average] < threshold ? f : nil
        }
    }

    /// One paragraph for `rx show`, `status`, the web app and `audiogram fit`, or nil when
    /// every band's average speech is audible. `maximumDB`: the maximum gain the deliveries were
    /// capped at (lower than ribbit's with the headphones' `max-gain`).
    public static func text(_ rx: Prescription, deliveries: [Ear: [BandDelivery]], maximumDB: Double = Prescription.maxGainDB) -> String? {
        var bands: [Ear: [Double]] = [:]
        var severe = false
        var steep = false
        for ear in [Ear.right, .left] {
            guard let delivery = deliveries[ear] else { continue }
            let inaudible = inaudibleBandsHz(rx, ear: ear, delivery: delivery)
            guard !inaudible.isEmpty else { continue }
            bands[ear] = inaudible
            let thresholds = rx.thresholds[ear] ?? [:]
            // Severe or profound in the speech range: a band from 500 to 2000 Hz lost, or 90 dB HL or more up to 4 kHz.
            if inaudible.contains(where: { $0 >= 500 && $0 <= 2000 })
                || thresholds.contains(where: { $0.key >= 500 && $0.key <= 4000 && $0.value >= 90 })
            {
                severe = true
            }
            // Steep: only the highs lost, the lows near normal.
            if inaudible.allSatisfy({ $0 >= 3000 }), (thresholds.filter { $0.key <= 1000 }.values.max() ?? 120) <= 40 { steep = true }
        }
        guard !bands.isEmpty else { return nil }
        func hz(_ list: [Double]) -> String { list.map { String(Int($0)) }.joined(separator: ", ") + " Hz" }
        let where_ =
            bands.count == 2 && bands[.right] == bands[.left]
            ? "\(hz(bands[.right]!)) (both ears)"
            : [Ear.right, .left].compactMap { ear in bands[ear].map { "\(hz($0)) (\(ear.rawValue) ear)" } }.joined(separator: "; ")
        var note =
            "Amplification cannot make average speech audible at \(where_): ribbit plays at most +\(Prescription.number(maximumDB)) dB."
        if severe { note += " A power hearing aid fitted by an audiologist, or a cochlear-implant assessment, may be indicated." }
        if steep {
            // Said of the ears it is about: on where the prescription lowers them, else suggested.
            let lowered = [Ear.right, .left].filter { bands[$0] != nil && rx.lowering[$0] != nil }
            if lowered.count == bands.count {
                note +=
                    " Frequency lowering is on (\(lowered.map { "lowering-\($0.rawValue)" }.joined(separator: ", ")))"
                    + ": these sounds play lower down, where the ear hears them."
            } else {
                let key =
                    [Ear.right, .left].first { bands[$0] != nil && rx.lowering[$0] == nil }.map { "lowering-\($0.rawValue)" }
                    ?? "lowering-right"
                note +=
                    " Frequency lowering ('\(key):' in the prescription, as many hearing aids offer) may bring these sounds within reach."
            }
        }
        if !severe && !steep { note += " Ask an audiologist whether a more powerful hearing aid would help." }
        return note
    }
}
