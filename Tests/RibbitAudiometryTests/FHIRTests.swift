import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSignals
import RibbitTestSupport
import Testing

/// The FHIR export of a real hearing test, checked by an outside FHIR R4 validator (fhir.resources
/// 6.4.0's models of FHIR 4.0.1, pinned in the Makefile: `make test-tools`).
@Suite struct FHIRTests {

    /// A seeded listener through the real procedure; the left ear hears nothing at 8 kHz up to
    /// the 90 dB HL maximum (a no-response).
    static func record() -> HearingTestRecord {
        var random = SeededRandom(seed: 16)
        var thresholds = SimulatedListener.slopingThresholds(random: &random)
        thresholds[.left]![8000] = 110
        var listener = SimulatedListener(thresholdsDBHL: thresholds, random: random)
        var result = runTest(listener: &listener, plan: HearingTest.Plan(maximumDBHL: 90), seed: 16)
        for index in result.frequencies.indices { result.frequencies[index].ambientNoiseDBSPL = 20.04 + Double(index) }
        return HearingTestRecord(
            id: 7, date: "2026-11-24T03:05:00Z", transducer: .hda200, calibrationProfile: "lab HDA 200", outputLeftDBSPL: 101.25,
            outputRightDBSPL: 100.5, inputDBSPL: 94, uncertaintyDB: nil, retsplIsStandard: true, ceilingDBHL: 90, result: result)
    }

    static func json(_ bundle: FHIRAudiogram.Bundle) throws -> Data { try JSONEncoder.pretty.encode(bundle) }

    /// Runs the validator on `json`: its exit status and output.
    static func validate(_ json: Data) throws -> (Int32, String) { try FHIRValidator.validate(json) }

    @Test func aRealTestsBundleIsValidFHIRR4() throws {
        let record = Self.record()
        #expect(record.result.threshold(ear: .left, frequencyHz: 8000)?.status == .noResponse)
        let bundle = FHIRAudiogram.bundle(record, patientName: "Ada Example")
        let (status, output) = try Self.validate(try Self.json(bundle))
        print("FHIR R4 validator: \(output.trimmingCharacters(in: .whitespacesAndNewlines))")
        #expect(status == 0, "\(output)")

        // What a reader of the bundle finds.
        let observations = bundle.entry.compactMap(\.resource.observation)
        let panel = try #require(observations.first { $0.code.coding?.first?.code == "89015-2" })
        // One Observation per ear and frequency: the 1 kHz retest is a component, not a second one.
        let audiogram = record.result.frequencies.filter { !$0.isRetest }
        #expect(panel.hasMember?.count == audiogram.count && audiogram.count < record.result.frequencies.count)
        #expect(observations.count == audiogram.count + 1)
        #expect(Set(observations.compactMap(\.id)).count == observations.count)
        #expect(bundle.entry.first.map { if case .patient = $0.resource { true } else { false } } == true)
        for observation in observations {
            #expect(observation.status == "preliminary")
            #expect(observation.effectiveDateTime == record.date)
            #expect(observation.note?.contains { $0.text == HearingTestRecord.disclaimer } == true)
            #expect(observation.method?.text?.contains("HDA 200") == true)
            #expect(observation.method?.text?.contains("lab HDA 200") == true)
            #expect((observation.valueQuantity == nil) != (observation.dataAbsentReason == nil) || observation.id == "audiogram")
        }
        let noResponse = try #require(observations.first { $0.id == "left-8000" })
        #expect(noResponse.code.coding?.first?.code == "89028-5")
        #expect(noResponse.valueQuantity == nil)
        #expect(noResponse.dataAbsentReason?.text?.contains("90 dB HL") == true)
        #expect(noResponse.component?.first?.valueQuantity?.value == 90)
        print("The no-response Observation:\n" + String(decoding: try JSONEncoder.pretty.encode(noResponse), as: UTF8.self))
        let right1k = try #require(observations.first { $0.id == "right-1000" })
        #expect(right1k.code.coding?.first?.code == "89017-8")
        #expect(right1k.valueQuantity?.value == Double(record.result.threshold(ear: .right, frequencyHz: 1000)!.thresholdDBHL!))
        #expect(right1k.valueQuantity?.code == "dB")
        let pair = try #require(record.result.frequencies.retestPair(ear: .right))
        let components = Dictionary(
            uniqueKeysWithValues: (right1k.component ?? []).compactMap { c in c.code.text.map { ($0, c.valueQuantity?.value) } })
        #expect(components["First measurement"] == pair.first.thresholdDBHL.map(Double.init))
        #expect(components["Retest"] == pair.retest.thresholdDBHL.map(Double.init))
        #expect(right1k.valueQuantity?.value == [pair.first, pair.retest].compactMap(\.thresholdDBHL).min().map(Double.init))
        // The same record exports to the same bytes (names derived from it, not random).
        #expect(try Self.json(FHIRAudiogram.bundle(record, patientName: "Ada Example")) == (try Self.json(bundle)))
    }

    @Test func anUnnamedBundleHasNoPatientAndIsValid() throws {
        let bundle = FHIRAudiogram.bundle(Self.record(), patientName: nil)
        #expect(bundle.entry.allSatisfy { $0.resource.observation?.subject == nil })
        let (status, output) = try Self.validate(try Self.json(bundle))
        #expect(status == 0, "\(output)")
    }

    /// Reliability flags reach every Observation's notes and the panel's interpretation.
    @Test func reliabilityFlagsAreInEveryObservation() throws {
        var record = Self.record()
        record.result.flags = [.falseAlarms, .retestDifference]
        let bundle = FHIRAudiogram.bundle(record, patientName: nil)
        let observations = bundle.entry.compactMap(\.resource.observation)
        let flags = "Reliability flags: false-alarms, retest-difference (the thresholds may be wrong)"
        #expect(observations.allSatisfy { $0.note?.contains { $0.text == flags } == true })
        let panel = try #require(observations.first { $0.id == "audiogram" })
        #expect(panel.interpretation?.compactMap(\.text) == ["Reliability: false-alarms", "Reliability: retest-difference"])
        let (status, output) = try Self.validate(try Self.json(bundle))
        #expect(status == 0, "\(output)")
    }

    /// Without a microphone signal the room was not checked: the panel says so and no Observation
    /// carries a noise level (a placeholder is not a measurement).
    @Test func aRoomNotCheckedIsSaidAndNotExported() throws {
        var record = Self.record()
        #expect(record.result.roomNoiseChecked)
        for index in record.result.frequencies.indices { record.result.frequencies[index].ambientNoiseDBSPL = nil }
        #expect(!record.result.roomNoiseChecked)
        let bundle = FHIRAudiogram.bundle(record, patientName: nil)
        let observations = bundle.entry.compactMap(\.resource.observation)
        let panel = try #require(observations.first { $0.id == "audiogram" })
        #expect(panel.note?.contains { $0.text.contains("ambient noise not checked (no microphone signal)") } == true)
        #expect(observations.allSatisfy { $0.component?.contains { $0.code.text?.contains("Ambient noise") == true } != true })
        let (status, output) = try Self.validate(try Self.json(bundle))
        #expect(status == 0, "\(output)")
    }

    /// The validator can say no: an Observation without its status, or with a value where the
    /// schema has none, is rejected and named.
    @Test func brokenBundlesAreRejected() throws {
        let good = try Self.json(FHIRAudiogram.bundle(Self.record(), patientName: "Ada Example"))
        func broken(_ change: (inout [String: Any]) -> Void) throws -> (Int32, String) {
            var object = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
            var entries = try #require(object["entry"] as? [[String: Any]])
            var resource = try #require(entries[1]["resource"] as? [String: Any])
            change(&resource)
            entries[1]["resource"] = resource
            object["entry"] = entries
            return try Self.validate(try JSONSerialization.data(withJSONObject: object))
        }
        let (noStatus, noStatusOutput) = try broken { $0.removeValue(forKey: "status") }
        #expect(noStatus == 1)
        #expect(noStatusOutput.contains("status"), "\(noStatusOutput)")
        let (unknown, unknownOutput) = try broken { $0["valueDecibels"] = 20 }
        #expect(unknown == 1)
        #expect(unknownOutput.contains("valueDecibels"), "\(unknownOutput)")
        let (badDate, _) = try broken { $0["effectiveDateTime"] = "24 November 2026" }
        #expect(badDate == 1)
        print("FHIR R4 validator on a bundle whose Observation lacks status: \(noStatusOutput.split(separator: "\n").first ?? "")")
    }
}

extension JSONEncoder {
    fileprivate static var pretty: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }
}
