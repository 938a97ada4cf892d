import RibbitPrescription
import RibbitSystem

/// A hearing test as an HL7 FHIR R4 (4.0.1) Bundle of type "collection": a Patient when a name
/// is given, a panel Observation (LOINC 89015-2, pure-tone threshold audiometry panel) and, as its
/// `hasMember`, one Observation per ear and frequency (LOINC "Hearing threshold Ear - left|right
/// --N Hz", the codes HL7's PACIO PFE and SPLASCH guides list under 89015-2). Every Observation
/// is "preliminary" (self-measured, nobody has reviewed it) and carries the record's disclaimer.
/// Encode with any JSON encoder: unset fields are nil and left out, as FHIR JSON wants.
public enum FHIRAudiogram {
    public static let loinc = "http://loinc.org"
    public static let ucum = "http://unitsofmeasure.org"
    static let dataAbsentReasonSystem = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
    static let categorySystem = "http://terminology.hl7.org/CodeSystem/observation-category"
    public static let panelCode = "89015-2"

    /// LOINC "Hearing threshold Ear - left/right --N Hz". No code exists for 125 Hz: that
    /// Observation is named by text only.
    public static let thresholdCodes: [Ear: [Int: String]] = [
        .left: [
            250: "91375-6", 500: "89024-4", 750: "91379-8", 1000: "89016-0", 1500: "91373-1", 2000: "89018-6", 3000: "89020-2",
            4000: "89022-8", 5000: "91377-2", 6000: "89026-9", 8000: "89028-5",
        ],
        .right: [
            250: "91374-9", 500: "89025-1", 750: "91378-0", 1000: "89017-8", 1500: "91372-3", 2000: "89019-4", 3000: "89021-0",
            4000: "89023-6", 5000: "91376-4", 6000: "89027-7", 8000: "89029-3",
        ],
    ]

    public static func bundle(_ record: HearingTestRecord, patientName: String?) -> Bundle {
        var ids = IDs(seed: "\(record.id ?? 0) \(record.date)")
        var entries: [Bundle.Entry] = []
        var subject: Reference?
        if let patientName {
            let url = ids.next()
            subject = Reference(reference: url, display: patientName)
            entries.append(Bundle.Entry(fullUrl: url, resource: .patient(Patient(id: "patient", name: [HumanName(text: patientName)]))))
        }
        let method = CodeableConcept(text: methodText(record))
        let flags = flagsText(record.result)
        let common = [Annotation(text: HearingTestRecord.disclaimer)] + (flags.map { [Annotation(text: $0)] } ?? [])

        let findings = record.findings
        let panelURL = ids.next()
        var members: [Bundle.Entry] = []
        // One Observation per ear and frequency, in the order tested: a measurement and its retest
        // are one value (the better), the pair its components.
        for tested in record.result.frequencies where !tested.isRetest && !tested.isMasked {
            guard let measured = record.result.threshold(ear: tested.ear, frequencyHz: tested.frequencyHz) else { continue }
            // A masked value replaces the unmasked pair: the pair is then told in its note.
            let pair = record.result.frequencies.retestPair(ear: measured.ear).flatMap {
                $0.first.frequencyHz == measured.frequencyHz && !measured.isMasked ? $0 : nil
            }
            let url = ids.next()
            let earName = measured.ear == .left ? "left" : "right"
            let display = "Hearing threshold Ear - \(earName) --\(measured.frequencyHz) Hz"
            let code = CodeableConcept(
                coding: thresholdCodes[measured.ear]?[measured.frequencyHz].map { [Coding(system: loinc, code: $0, display: display)] },
                text: display)
            var observation = Observation(
                id: "\(earName)-\(measured.frequencyHz)", code: code, subject: subject,
                effectiveDateTime: record.date, method: method)
            var notes = common
            switch measured.status {
            case .threshold:
                observation.valueQuantity = .dBHL(Double(measured.thresholdDBHL ?? 0))
            case .noResponse:
                let text = "No response at the maximum level tested (\(measured.maximumTestedDBHL) dB HL): the threshold is above it"
                observation.dataAbsentReason = CodeableConcept(
                    coding: [Coding(system: dataAbsentReasonSystem, code: "as-text", display: "As Text")], text: text)
                notes.append(Annotation(text: text))
            case .undetermined:
                let text = "Undetermined: the answers were too inconsistent to find a threshold; retest"
                observation.dataAbsentReason = CodeableConcept(
                    coding: [Coding(system: dataAbsentReasonSystem, code: "unknown", display: "Unknown")], text: text)
                notes.append(Annotation(text: text))
            }
            if let noise = measured.maskingDBEM {
                let unmasked = record.result.frequencies.filter { !$0.isMasked }.kept(ear: measured.ear, frequencyHz: measured.frequencyHz)
                let how =
                    measured.status == .threshold
                    ? "the threshold held within \(HearingTest.Plan.plateauToleranceDB) dB with \(HearingTest.Plan.plateauStepDB) dB more noise (plateau)"
                    : "not heard at the maximum with it"
                notes.append(
                    Annotation(
                        text: "Masked: narrow-band noise at \(noise) dB EM in the other ear; \(how); unmasked it was "
                            + (unmasked?.levelText ?? "not measured")))
            }
            if findings.crossHeard.contains(where: { $0.ear == measured.ear && $0.frequencyHz == measured.frequencyHz }) {
                notes.append(
                    Annotation(
                        text: "Unmasked: may be the other ear (within \(HearingTestFindings.crossHearingMarginDB) dB of the "
                            + "headphones' \(findings.interauralAttenuationDB) dB interaural attenuation above it, and no masking noise "
                            + "was used); the true threshold may be worse"))
            }
            if let pair {
                notes.append(
                    Annotation(
                        text: "Measured twice (first \(pair.first.levelText), retest \(pair.retest.levelText)): the better is the value "
                            + "(ASHA 2005); more than \(HearingTestResult.maximumRetestDifferenceDB) dB apart is flagged"))
            }
            observation.note = notes
            var components = [
                Observation.Component(
                    code: CodeableConcept(text: "Maximum level tested"), valueQuantity: .dBHL(Double(measured.maximumTestedDBHL)))
            ]
            // The louder room of the pair, as the report shows it.
            if let noise = [pair?.first, pair?.retest, measured].compactMap({ $0?.ambientNoiseDBSPL }).max() {
                components.append(
                    Observation.Component(
                        code: CodeableConcept(text: "Ambient noise, octave band around the test frequency"),
                        valueQuantity: Quantity(value: (noise * 10).rounded() / 10, unit: "dB SPL", system: ucum, code: "dB[SPL]")))
            }
            for (name, value) in [("First measurement", pair?.first), ("Retest", pair?.retest)] {
                guard let level = value?.thresholdDBHL else { continue }
                components.append(Observation.Component(code: CodeableConcept(text: name), valueQuantity: .dBHL(Double(level))))
            }
            observation.component = components
            members.append(Bundle.Entry(fullUrl: url, resource: .observation(observation)))
        }

        var panel = Observation(
            id: "audiogram",
            code: CodeableConcept(coding: [Coding(system: loinc, code: panelCode, display: nil)], text: "Pure-tone audiogram"),
            subject: subject, effectiveDateTime: record.date, method: method)
        panel.hasMember = members.map { Reference(reference: $0.fullUrl, display: nil) }
        let findingTexts = findings.lines.map { CodeableConcept(text: $0) }
        let reliability = record.result.flags.map { CodeableConcept(text: "Reliability: \($0.rawValue)") }
        panel.interpretation = findingTexts.isEmpty && reliability.isEmpty ? nil : findingTexts + reliability
        panel.note = common + [Annotation(text: indicatorsText(record.result))]
        entries.append(Bundle.Entry(fullUrl: panelURL, resource: .observation(panel)))
        entries += members
        return Bundle(timestamp: record.date, entry: entries)
    }

    static func methodText(_ record: HearingTestRecord) -> String {
        let transducer: String
        switch record.transducer {
        case .tdh39: transducer = "Telephonics TDH-39 supra-aural earphones"
        case .hda200: transducer = "Sennheiser HDA 200 circumaural earphones"
        case .er3a: transducer = "Etymotic ER-3A insert earphones"
        case .consumer: transducer = "consumer headphones (no standard RETSPL)"
        }
        var text = "Self-administered automated pure-tone air-conduction audiometry (ribbit, modified Hughson-Westlake), \(transducer); "
        if let profile = record.calibrationProfile {
            text += "calibration profile \"\(profile)\""
        } else {
            text += "uncalibrated (documented defaults)"
        }
        text += ": 0 dBFS 1 kHz = \(oneDecimal(record.outputLeftDBSPL)) dB SPL left, \(oneDecimal(record.outputRightDBSPL)) dB SPL right"
        if let uncertainty = record.uncertaintyDB { text += ", levels uncertain by +-\(oneDecimal(uncertainty)) dB" }
        text += record.retsplIsStandard ? "; standard RETSPL table" : "; non-standard RETSPL table"
        text += "; ceiling \(oneDecimal(record.ceilingDBHL)) dB HL"
        return text
    }

    static func flagsText(_ result: HearingTestResult) -> String? {
        guard !result.flags.isEmpty else { return nil }
        return "Reliability flags: " + result.flags.map(\.rawValue).joined(separator: ", ")
            + (result.isUnreliable ? " (the thresholds may be wrong)" : "")
    }

    static func indicatorsText(_ result: HearingTestResult) -> String {
        var parts = ["catch trials \(result.catchTrials), false alarms on them \(result.catchTrialFalseAlarms)"]
        parts.append("presses outside a tone \(result.strayPresses)")
        if let rate = result.falseAlarmRate { parts.append("false-alarm rate \(oneDecimal(rate * 100)) %") }
        for retest in result.retestDifferences {
            parts.append("1000 Hz retest \(retest.ear.rawValue) \(retest.differenceDB > 0 ? "+" : "")\(retest.differenceDB) dB")
        }
        if !result.roomNoiseChecked { parts.append("ambient noise not checked (no microphone signal)") }
        if let time = result.meanResponseTimeMs { parts.append("mean response time \(Int(time.rounded())) ms") }
        return "Reliability indicators: " + parts.joined(separator: "; ")
    }

    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    /// urn:uuid: names, the same for the same record (so an export made twice is the same
    /// file): FNV-1a of the seed and a counter, mixed, as an RFC 9562 version 8 (custom) UUID.
    struct IDs {
        let seed: String
        var counter: UInt64 = 0

        mutating func next() -> String {
            counter += 1
            let high = Self.mix(FNV1a.hash("\(seed)#\(counter)"))
            let low = Self.mix(high ^ 0x9e37_79b9_7f4a_7c15)
            let versioned = (high & ~0xF000) | 0x8000
            let variant = (low & ~(0xC000_0000_0000_0000)) | 0x8000_0000_0000_0000
            let hex = FNV1a.hex(versioned) + FNV1a.hex(variant)
            let characters = Array(hex)
            let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
            return "urn:uuid:" + groups.joined(separator: "-")
        }

        /// SplitMix64's finalizer: every input bit moves every output bit.
        static func mix(_ value: UInt64) -> UInt64 {
            var z = value
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }

    }

    // MARK: The FHIR R4 types used, with only the fields this export fills.

    public struct Bundle: Sendable, Equatable, Codable {
        public var resourceType = "Bundle"
        public var type = "collection"
        public var timestamp: String?
        public var entry: [Entry]

        public struct Entry: Sendable, Equatable, Codable {
            public var fullUrl: String
            public var resource: Resource
        }
    }

    public enum Resource: Sendable, Equatable, Codable {
        case patient(Patient)
        case observation(Observation)

        public var observation: Observation? {
            if case .observation(let observation) = self { return observation }
            return nil
        }

        enum Key: String, CodingKey { case resourceType }

        public init(from decoder: any Decoder) throws {
            let type = try decoder.container(keyedBy: Key.self).decode(String.self, forKey: .resourceType)
            switch type {
            case "Patient": self = .patient(try Patient(from: decoder))
            case "Observation": self = .observation(try Observation(from: decoder))
            default:
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "unexpected resourceType \(type)"))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .patient(let patient): try patient.encode(to: encoder)
            case .observation(let observation): try observation.encode(to: encoder)
            }
        }
    }

    public struct Patient: Sendable, Equatable, Codable {
        public var resourceType = "Patient"
        public var id: String
        public var name: [HumanName]
    }

    public struct HumanName: Sendable, Equatable, Codable {
        public var text: String
    }

    public struct Observation: Sendable, Equatable, Codable {
        public var resourceType = "Observation"
        public var id: String
        /// "preliminary": self-measured and not reviewed by a clinician.
        public var status = "preliminary"
        public var category = [
            CodeableConcept(coding: [Coding(system: FHIRAudiogram.categorySystem, code: "exam", display: "Exam")], text: nil)
        ]
        public var code: CodeableConcept
        public var subject: Reference?
        public var effectiveDateTime: String
        public var performer: [Reference]?
        public var valueQuantity: Quantity?
        public var dataAbsentReason: CodeableConcept?
        public var interpretation: [CodeableConcept]?
        public var note: [Annotation]?
        public var method: CodeableConcept?
        public var hasMember: [Reference]?
        public var component: [Component]?

        init(id: String, code: CodeableConcept, subject: Reference?, effectiveDateTime: String, method: CodeableConcept) {
            self.id = id
            self.code = code
            self.subject = subject
            // Self-administered: the person tested is who performed it.
            self.performer = subject.map { [$0] }
            self.effectiveDateTime = effectiveDateTime
            self.method = method
        }

        public struct Component: Sendable, Equatable, Codable {
            public var code: CodeableConcept
            public var valueQuantity: Quantity?
        }
    }

    public struct CodeableConcept: Sendable, Equatable, Codable {
        public var coding: [Coding]?
        public var text: String?

        init(coding: [Coding]? = nil, text: String?) {
            self.coding = coding
            self.text = text
        }
    }

    public struct Coding: Sendable, Equatable, Codable {
        public var system: String
        public var code: String
        public var display: String?
    }

    public struct Reference: Sendable, Equatable, Codable {
        public var reference: String
        public var display: String?
    }

    public struct Annotation: Sendable, Equatable, Codable {
        public var text: String
    }

    public struct Quantity: Sendable, Equatable, Codable {
        public var value: Double
        public var unit: String
        public var system: String
        public var code: String

        /// UCUM has no hearing-level unit: the code is plain "dB" (as HL7's audiogram examples
        /// use) and the unit text says HL.
        static func dBHL(_ value: Double) -> Quantity { Quantity(value: value, unit: "dB HL", system: FHIRAudiogram.ucum, code: "dB") }
    }
}
