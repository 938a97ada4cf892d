import Foundation
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitStore

/// A prescription as `rx show` prints it: fields, and per ear the thresholds and target gains.
/// Here, not in ribbitd, because the web app's Load and Details screens show the same.
public struct PrescriptionReport: Encodable, Sendable {
    public struct EarReport: Encodable, Sendable {
        /// false: the prescription leaves this ear out and it is passed through unchanged.
        public var processed: Bool
        /// dB HL by frequency in Hz, as given.
        public var thresholdsDBHL: [String: Int]
        /// The frequencies whose threshold is a no response at that level (`8000=90nr`), ascending.
        public var noResponseHz: [Int]
        /// Target insertion gain in dB by frequency in Hz; null where the low-pass stops all sound.
        public var targetGainDB: [String: Double?]
        /// Uncomfortable loudness levels in dB HL by frequency (`ucl-left:`, format version 2).
        public var uclDBHL: [String: Int]?
        /// The compressor's bands (absent for an ear left out).
        public var bands: [BandReport]?
    }

    /// Frequency lowering of one ear (`lowering-left`, `lowering-right`).
    public struct LoweringReport: Encodable, Sendable {
        public var cutoffHz: Double
        public var ratio: Double
        /// Where sound at 3, 4, 6 and 8 kHz (those above the cut-off) is played, Hz, by the curve.
        public var mappedHz: [String: Double]
    }

    /// One compressor band (`CompressorFitting`): what it does to steady LTASS speech.
    public struct BandReport: Encodable, Sendable {
        public var centreHz: Double
        /// Insertion gain played for speech at 50, 65 and 80 dB SPL overall, maximum gain and
        /// output limit included (`CompressorFitting.delivery`).
        public var gain50DB: Double
        public var gain65DB: Double
        public var gain80DB: Double
        /// What the rule asks for at the same levels, above the maximum too.
        public var target50DB: Double
        public var target65DB: Double
        public var target80DB: Double
        /// Per level (50, 65, 80), what holds the gain below the target ("maximum gain",
        /// "digital gain", "output limit"), or null where it plays the target.
        public var cappedBy: [String?]
        /// Absent when the band does not compress (ratio 1).
        public var kneeDBSPL: Double?
        public var ratio: Double
        public var limitDBSPL: Double
    }

    public var name: String
    public var environment: String
    public var audiologist: String?
    public var patient: String?
    public var date: String?
    public var note: String?
    public var rule: String
    public var lowpassHz: Int?
    public var maxOutputDBFS: Double
    public var formatVersion: Int
    public var attackMs: Double
    public var releaseMs: Double
    /// Absent when expansion is off.
    public var expansionKneeDBSPL: Double?
    /// The signature's verdict in words, checked by the caller (the file's against the trusted
    /// keys, or the history's as recorded at load): "unsigned", "signed by NAME (trusted)",
    /// "signed, unknown key KEYID".
    public var signature: String
    public var ears: [String: EarReport]
    /// The output limit in force, dB SPL, per ear ("left", "right"): the loudest band's (bands
    /// under a UCL lie lower), and why it is what it is.
    public var outputLimitDBSPL: [String: Double]
    public var outputLimitReason: String
    /// The headphones the UCLs were measured with (their RETSPL converts them); nil without UCLs.
    public var uclTransducer: String?
    /// The most insertion gain any band plays (`Prescription.maxGainDB`, uncalibrated).
    public var maximumGainDB: Double
    /// For the audiologist and the wearer when average speech stays inaudible somewhere
    /// (`ClinicalNote`); absent otherwise.
    public var clinicalNote: String?
    /// Frequency lowering by ear ("left", "right"); absent when no ear is lowered (the default).
    public var lowering: [String: LoweringReport]?

    /// The frequencies `LoweringReport.mappedHz` shows, where they lie above the cut-off.
    public static let loweringShownHz = [3000, 4000, 6000, 8000]

    /// `trusted`: the signature is by a trusted key (the output limits depend on it).
    public init(_ rx: Prescription, fitting: Fitting, signature: String, trusted: Bool) {
        let settings = Dictionary(
            uniqueKeysWithValues: Ear.allCases.map { ($0, CompressorFitting.settings(rx, ear: $0, trusted: trusted)) })
        let deliveries = CompressorFitting.deliveries(rx, trusted: trusted)
        maximumGainDB = Prescription.maxGainDB
        clinicalNote = ClinicalNote.text(rx, deliveries: deliveries)
        lowering =
            rx.lowering.isEmpty
            ? nil
            : Dictionary(
                uniqueKeysWithValues: rx.lowering.map { ear, setting in
                    let shown = Self.loweringShownHz.filter { Double($0) > setting.cutoffHz }
                    return (
                        ear.rawValue,
                        LoweringReport(
                            cutoffHz: setting.cutoffHz, ratio: setting.ratio,
                            mappedHz: Dictionary(
                                uniqueKeysWithValues: shown.map { (String($0), (setting.mappedHz(Double($0)) * 10).rounded() / 10) }))
                    )
                })
        func round1(_ x: Double) -> Double { (x * 10).rounded() / 10 + 0 }  // + 0: no -0.0
        formatVersion = rx.version
        let times = CompressorSettings.speechTimes
        attackMs = settings.values.compactMap { $0?.attackMs }.first ?? rx.attackMs ?? times.attackMs
        releaseMs = settings.values.compactMap { $0?.releaseMs }.first ?? rx.releaseMs ?? times.releaseMs
        expansionKneeDBSPL =
            switch rx.expansion {
            case .off: nil
            case .on: Prescription.defaultExpansionKneeDBSPL
            case .knee(let db): db
            }
        name = rx.name
        environment = rx.environment
        audiologist = rx.audiologist
        patient = rx.patient
        date = rx.date
        note = rx.note
        rule = rx.rule.rawValue
        lowpassHz = rx.lowpassHz
        maxOutputDBFS = rx.maxOutputDBFS
        self.signature = signature
        let limits = Ear.allCases.map { ear in
            (settings[ear] ?? nil) ?? CompressorFitting.passThrough(rx, trusted: trusted)
        }
        outputLimitDBSPL = Dictionary(
            uniqueKeysWithValues: zip(Ear.allCases, limits).map { ($0.rawValue, round1($1.bands.map(\.limitDBSPL).max() ?? 0)) })
        let compressing = limits.contains { $0.bands.contains { $0.ratio > 1 } }
        outputLimitReason =
            CompressorFitting.capReason(rx, trusted: trusted, compressing: compressing)
            + (rx.ucl.isEmpty
                ? ""
                : "; lower where the UCL less 5 dB is lower, the UCL's dB HL through "
                    + (rx.uclTransducer.map { "the RETSPL of \($0.referenceName)" }
                        ?? "ISO 389-7 free-field thresholds (no ucl-transducer)"))
        uclTransducer = rx.ucl.isEmpty ? nil : rx.uclTransducer?.rawValue
        ears = Dictionary(
            uniqueKeysWithValues: Ear.allCases.map { ear in
                let gains = Prescription.audiometricFrequencies.map { f -> (String, Double?) in
                    let db = fitting.targetGainDB(for: ear, atHz: Double(f))
                    return (String(f), db.isFinite ? (db * 10).rounded() / 10 : nil)
                }
                return (
                    ear.rawValue,
                    EarReport(
                        processed: rx.targetGains(for: ear) != nil,
                        thresholdsDBHL: Dictionary(uniqueKeysWithValues: (rx.thresholds[ear] ?? [:]).map { (String($0.key), $0.value) }),
                        noResponseHz: (rx.noResponse[ear] ?? []).sorted(),
                        targetGainDB: Dictionary(uniqueKeysWithValues: gains),
                        uclDBHL: rx.ucl[ear].map { Dictionary(uniqueKeysWithValues: $0.map { (String($0.key), $0.value) }) },
                        bands: settings[ear]??.bands.enumerated().map { i, band in
                            let delivery = deliveries[ear]![i]
                            return BandReport(
                                centreHz: band.centreHz, gain50DB: round1(delivery.deliveredDB[0]),
                                gain65DB: round1(delivery.deliveredDB[1]),
                                gain80DB: round1(delivery.deliveredDB[2]), target50DB: round1(delivery.targetDB[0]),
                                target65DB: round1(delivery.targetDB[1]), target80DB: round1(delivery.targetDB[2]),
                                cappedBy: delivery.cappedBy.map { $0?.rawValue },
                                kneeDBSPL: band.ratio > 1 ? round1(band.kneeDBSPL) : nil, ratio: (band.ratio * 100).rounded() / 100,
                                limitDBSPL: round1(band.limitDBSPL))
                        })
                )
            })
    }

    public var text: String {
        let ruleNames = [
            "nal-r": "NAL-R", "half-gain": "half-gain", "pogo2": "POGO II", "explicit": "explicit gains", "camfit": "CAMFIT (compressive)",
        ]
        var lines = [name]
        func field(_ label: String, _ value: String?) {
            if let value { lines.append("  " + label.padding(toLength: 13, withPad: " ", startingAt: 0) + value) }
        }
        field("environment", environment)
        field("audiologist", audiologist)
        field("patient", patient)
        field("date", date)
        field("rule", ruleNames[rule] ?? rule)
        field("low-pass", lowpassHz.map { "\($0) Hz, nothing above \(Int(Double($0) * 1.25)) Hz" } ?? "none")
        field(
            "output limit",
            [Ear.right, .left].map { "\(Prescription.number(outputLimitDBSPL[$0.rawValue] ?? 0)) dB SPL \($0.rawValue)" }
                .joined(separator: ", ") + " (\(outputLimitReason))")
        field("max output", "\(Prescription.number(maxOutputDBFS)) dBFS")
        field(
            "compressor",
            "attack \(Prescription.number(attackMs)) ms, release \(Prescription.number(releaseMs)) ms, expansion "
                + (expansionKneeDBSPL.map { "below \(Prescription.number($0)) dB SPL" } ?? "off"))
        if let lowering {
            field(
                "lowering",
                [Ear.right, .left].compactMap { ear in
                    lowering[ear.rawValue].map { report in
                        let shown = Self.loweringShownHz.filter { report.mappedHz[String($0)] != nil }
                        let moves = shown.map { "\($0) -> \(Int(report.mappedHz[String($0)]!.rounded()))" }.joined(separator: ", ")
                        return
                            "\(ear.rawValue) above \(Prescription.number(report.cutoffHz)) Hz, ratio \(Prescription.number(report.ratio))"
                            + (moves.isEmpty ? "" : " (Hz: \(moves))")
                    }
                }.joined(separator: "; "))
        }
        field("signature", signature)
        field("note", note)
        lines.append("")
        let frequencies = Prescription.audiometricFrequencies
        func row(_ label: String, _ cells: [String]) -> String {
            label.padding(toLength: 18, withPad: " ", startingAt: 0) + cells.map { $0.leftPadded(to: 6) }.joined()
        }
        lines.append(row("frequency (Hz)", frequencies.map(String.init)))
        // The right ear first, as audiograms, fitting software and audiometer print-outs give it.
        for ear in [Ear.right, .left] {
            let report = ears[ear.rawValue]!
            let label = ear == .left ? "left " : "right"
            lines.append(
                row(
                    "\(label) HL (dB)",
                    frequencies.map { f in
                        report.thresholdsDBHL[String(f)].map { "\($0)" + (report.noResponseHz.contains(f) ? "nr" : "") } ?? "-"
                    }))
            if report.processed {
                lines.append(
                    row(
                        "\(label) gain (dB)",
                        frequencies.map { f in
                            (report.targetGainDB[String(f)] ?? nil).map { String(format: "%.1f", $0) } ?? "off"
                        }))
            } else {
                lines.append("\(label) gain (dB)   not prescribed: this ear is passed through unchanged")
            }
        }
        // Per band: the gain for speech at 50, 65 and 80 dB SPL, knee, ratio and output limit.
        // Indented, so the audiogram rows above stay the only ones starting with an ear's name.
        lines.append("")
        func bandRow(_ label: String, _ cells: [String]) -> String {
            "  " + label.padding(toLength: 20, withPad: " ", startingAt: 0) + cells.map { $0.leftPadded(to: 6) }.joined()
        }
        lines.append(bandRow("band (Hz)", Camfit.defaultCentresHz.map { String(Int($0)) }))
        for ear in [Ear.right, .left] {
            let label = ear.rawValue
            guard let bands = ears[ear.rawValue]!.bands else {
                lines.append("  \(label): not prescribed")
                continue
            }
            func one(_ x: Double) -> String { String(format: "%.1f", x) }
            lines.append(bandRow("\(label) 50 dB in (dB)", bands.map { one($0.gain50DB) }))
            lines.append(bandRow("\(label) 65 dB in (dB)", bands.map { one($0.gain65DB) }))
            lines.append(bandRow("\(label) 80 dB in (dB)", bands.map { one($0.gain80DB) }))
            lines.append(bandRow("\(label) knee (dB SPL)", bands.map { $0.kneeDBSPL.map(one) ?? "-" }))
            lines.append(bandRow("\(label) ratio", bands.map { String(format: "%.2f", $0.ratio) }))
            lines.append(bandRow("\(label) limit (dB SPL)", bands.map { one($0.limitDBSPL) }))
        }
        // Where a band plays less than the rule asks: by how much, and what holds it.
        let short = [Ear.right, .left].flatMap { ear in
            (ears[ear.rawValue]!.bands ?? []).filter { $0.cappedBy.contains { $0 != nil } }.map { (ear, $0) }
        }
        if !short.isEmpty {
            lines.append("")
            lines.append(
                "short of target (dB for speech at 50 / 65 / 80 dB SPL; ribbit plays at most +\(Prescription.number(maximumGainDB)) dB):")
            for (ear, band) in short {
                func three(_ a: Double, _ b: Double, _ c: Double) -> String {
                    [a, b, c].map { String(format: "%.1f", $0) }.joined(separator: " / ")
                }
                let causes = Set(band.cappedBy.compactMap { $0 }).sorted().joined(separator: ", ")
                lines.append(
                    "  \(ear.rawValue) \(Int(band.centreHz)) Hz: target \(three(band.target50DB, band.target65DB, band.target80DB)),"
                        + " played \(three(band.gain50DB, band.gain65DB, band.gain80DB)) (\(causes))")
            }
        }
        if let clinicalNote {
            lines.append("")
            lines.append("note for the audiologist: " + clinicalNote)
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// Right-aligned in `width` characters, for the CLI's tables.
    public func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

extension PrescriptionReport {
    /// `rx show`: a checked prescription with its verdict. The targets do not depend on the
    /// rate; 48 kHz only sizes the (unused) engine.
    public init(_ accepted: Intake.Accepted) throws(EngineError) {
        let rx = accepted.prescription
        self.init(
            rx, fitting: try Fitting(prescription: rx, sampleRate: 48000), signature: accepted.verdict.description,
            trusted: accepted.isTrusted)
    }

    /// `ribbitd show ID`: a history entry with the verdict the history recorded at load, as `list`
    /// and `status` say it. A damaged or unparsable entry is an IntakeError.
    public init(record: PrescriptionStore.Record) throws {
        let rx: Prescription
        do { rx = try Prescription.parse(Array(record.intactPayload().utf8)) } catch let error as StoreError {
            throw IntakeError(error.description)
        } catch {
            throw IntakeError(
                "history entry \(record.id ?? 0) does not parse (\(error)); remove it with `ribbitd remove \(record.id ?? 0)`")
        }
        self.init(
            rx, fitting: try Fitting(prescription: rx, sampleRate: 48000), signature: record.signatureText,
            trusted: record.isTrusted)
    }
}
