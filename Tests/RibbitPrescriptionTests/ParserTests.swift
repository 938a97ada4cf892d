import Foundation
import Testing

@testable import RibbitPrescription

let samplesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Prescriptions")

func parse(_ text: String) throws(PrescriptionError) -> Prescription { try Prescription.parse(Array(text.utf8)) }

let minimal = """
    RIBBIT-RX 1
    name: Test
    env: quiet
    left: 500=20 1000=30 2000=40 4000=50

    """

/// `minimal` with one line replaced or added (before the final LF).
func variant(adding line: String) -> String { minimal + line + "\n" }

@Suite struct ParserTests {
    @Test func everySampleParsesAndRoundTripsThroughItsCanonicalText() throws {
        let files = try FileManager.default.contentsOfDirectory(at: samplesFolder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "rx" }
        #expect(files.count >= 7)
        for file in files {
            let rx = try Prescription.parse(Array(try Data(contentsOf: file)))
            #expect(try parse(rx.text) == rx, "\(file.lastPathComponent)")
        }
    }

    @Test func minimalPrescriptionHasTheDocumentedDefaults() throws {
        let rx = try parse(minimal)
        #expect(rx.rule == .nalR)
        #expect(rx.lowpassHz == 8000)
        #expect(rx.maxOutputDBFS == -1)
        #expect(rx.thresholds[.left] == [500: 20, 1000: 30, 2000: 40, 4000: 50])
        #expect(rx.thresholds[.right] == nil)
        #expect(rx.targetGains(for: .right) == nil)
    }

    @Test func extensionKeysAreKeptAndIgnored() throws {
        let rx = try parse(variant(adding: "x-clinic: Example Street 1"))
        #expect(rx.extensions.first?.key == "x-clinic")
        #expect(rx.extensions.first?.value == "Example Street 1")
    }

    @Test func signatureIsAcceptedOnlyAsTheLastLine() throws {
        #expect(try parse(variant(adding: "sig: ed25519:abc:AAAA")).signature == "ed25519:abc:AAAA")
        #expect(throws: PrescriptionError(line: 5, "'sig' must be the last line")) {
            try parse(variant(adding: "sig: ed25519:abc:AAAA\nnote: after"))
        }
    }

    /// `8000=90nr`: no response at 90 dB HL, the level tested. Kept per ear, written back the
    /// same way (QR codes carry the text), and fitted as a threshold of 90 by every rule.
    @Test func noResponseIsKeptRoundTripsAndFitsAsTheLevelTested() throws {
        let rx = try parse(variant(adding: "right: 500=20 1000=30 2000=40 4000=60 6000=85nr 8000=90nr"))
        #expect(rx.thresholds[.right] == [500: 20, 1000: 30, 2000: 40, 4000: 60, 6000: 85, 8000: 90])
        #expect(rx.noResponse == [.right: [6000, 8000]])
        #expect(rx.text.contains("right: 500=20 1000=30 2000=40 4000=60 6000=85nr 8000=90nr\n"))
        #expect(try parse(rx.text) == rx)
        // Not the same prescription as a threshold measured at that level ...
        let measured = try parse(variant(adding: "right: 500=20 1000=30 2000=40 4000=60 6000=85 8000=90"))
        #expect(measured != rx && measured.noResponse.isEmpty)
        // ... but the same gains: the least the threshold can be, so never more gain than measured.
        for rule in FittingRule.allCases where rule != .explicit {
            var a = rx, b = measured
            a.rule = rule
            b.rule = rule
            #expect(a.targetGains(for: .right) == b.targetGains(for: .right), "\(rule)")
        }
        // A no response at a required frequency counts too (NAL-R's X uses it).
        let atRequired = try parse(variant(adding: "right: 500=20 1000=30 2000=100nr 4000=110nr"))
        #expect(atRequired.noResponse[.right] == [2000, 4000] && atRequired.thresholds[.right]?[2000] == 100)
    }

    /// Each malformed input and the exact error it must produce.
    static let failures: [(String, PrescriptionError)] = [
        ("", PrescriptionError(line: nil, "the prescription is empty; it must start with 'RIBBIT-RX 1'")),
        (
            "RIBBIT-RX 3\nname: a\n",
            PrescriptionError(
                line: 1,
                "unsupported version 'RIBBIT-RX 3'; this ribbitd reads 'RIBBIT-RX 1' and 'RIBBIT-RX 2' (a newer ribbitd may read it)")
        ),
        ("hello\n", PrescriptionError(line: 1, "must be 'RIBBIT-RX 1'; this is not a ribbit prescription")),
        (
            minimal.replacingOccurrences(of: "\n", with: "\r\n"),
            PrescriptionError(line: 1, "ends with a carriage return; save the file with LF (Unix) line ends")
        ),
        (
            variant(adding: "note: one\u{0B}sig: ed25519:x:y"),
            PrescriptionError(line: 5, "holds the control character U+000B; a prescription is plain text")
        ),
        (
            variant(adding: "note: bell\u{07}"),
            PrescriptionError(line: 5, "holds the control character U+0007; a prescription is plain text")
        ),
        (
            variant(adding: "colour: blue"),
            PrescriptionError(
                line: 5,
                "unknown key 'colour' (known: name, env, audiologist, patient, date, note, rule, left, right, gain-left, gain-right, lowpass, max-output; prefix your own keys with 'x-')"
            )
        ),
        (variant(adding: "name: Again"), PrescriptionError(line: 5, "'name' is given twice (first on line 2)")),
        (variant(adding: "just words"), PrescriptionError(line: 5, "expected 'key: value', found 'just words'")),
        (variant(adding: ""), PrescriptionError(line: 5, "is empty; remove blank lines")),
        (variant(adding: "note:"), PrescriptionError(line: 5, "'note' has no value")),
        (variant(adding: "Rule: nal-r"), PrescriptionError(line: 5, "'Rule' is not a key (lowercase letters, digits and '-')")),
        (
            "RIBBIT-RX 1\nenv: quiet\nleft: 500=20 1000=30 2000=40 4000=50\n",
            PrescriptionError(line: nil, "'name' is missing; every prescription needs a name")
        ),
        (
            "RIBBIT-RX 1\nname: a\nleft: 500=20 1000=30 2000=40 4000=50\n",
            PrescriptionError(line: nil, "'env' is missing; every prescription needs the environment it is for (e.g. quiet, noisy, music)")
        ),
        (
            "RIBBIT-RX 1\nname: a\nenv: quiet\n",
            PrescriptionError(line: nil, "no ear is given; add 'left' and/or 'right' thresholds (an ear left out gets no processing)")
        ),
        (
            variant(adding: "rule: magic"),
            PrescriptionError(line: 5, "rule 'magic' is unknown; use one of nal-r, half-gain, pogo2, explicit")
        ),
        (variant(adding: "date: 2026-02-30"), PrescriptionError(line: 5, "date '2026-02-30' is not a real date as YYYY-MM-DD")),
        (
            variant(adding: "lowpass: 500"),
            PrescriptionError(line: 5, "lowpass '500' must be 'none' or a frequency in Hz from 1000 to 20000")
        ),
        (variant(adding: "max-output: 3"), PrescriptionError(line: 5, "max-output '3' must be a level in dBFS from -40 to 0")),
        (variant(adding: "max-output: nan"), PrescriptionError(line: 5, "max-output 'nan' must be a level in dBFS from -40 to 0")),
        (
            variant(adding: "right: 500=20 1000=30 2000=40"),
            PrescriptionError(line: 5, "'right' lacks 4000 Hz; 500, 1000, 2000 and 4000 Hz are required")
        ),
        (
            variant(adding: "right: 500=20 1000=30 2000=40 4000=50 9000=60"),
            PrescriptionError(
                line: 5, "'right': 9000 Hz is not an audiometric frequency (125 250 500 750 1000 1500 2000 3000 4000 6000 8000)")
        ),
        (
            variant(adding: "right: 500=20 1000=130 2000=40 4000=50"),
            PrescriptionError(line: 5, "'right': 130 dB HL at 1000 Hz is outside -10 to 120")
        ),
        (variant(adding: "right: 500=20 1000=30 2000=40 4000=50 500=10"), PrescriptionError(line: 5, "'right': 500 Hz is given twice")),
        (
            variant(adding: "right: 500=20 1000=3O 2000=40 4000=50"),
            PrescriptionError(line: 5, "'right': '1000=3O' is not FREQ=DB (e.g. 1000=35)")
        ),
        (
            variant(adding: "right: 500=20 1000=30 2000=40 4000=50 8000=nr"),
            PrescriptionError(line: 5, "'right': 'nr' has no level; no response is written after the level tested (e.g. 8000=90nr)")
        ),
        (
            variant(adding: "right: 500=20 1000=30 2000=40 4000=50 8000=90NR"),
            PrescriptionError(line: 5, "'right': write no response in lowercase: 90nr, not '90NR'")
        ),
        (
            variant(adding: "right: 500=20 1000=30 2000=40 4000=50 8000=90 nr"),
            PrescriptionError(line: 5, "'right': 'nr' goes right after the level tested, with no space (e.g. 8000=90nr)")
        ),
        (
            variant(adding: "right: 500=20 1000=30 2000=40 4000=50 8000=125nr"),
            PrescriptionError(line: 5, "'right': 125 dB HL at 8000 Hz is outside -10 to 120")
        ),
        (
            variant(adding: "right: 500=20 1000=30 2000=40 4000=50 8000=nr90"),
            PrescriptionError(line: 5, "'right': '8000=nr90' is not FREQ=DB (e.g. 1000=35)")
        ),
        (
            "RIBBIT-RX 1\nname: a\nenv: quiet\nrule: explicit\ngain-right: 500=10 1000=20 2000=30 4000=30nr\n",
            PrescriptionError(line: 5, "'gain-right': '4000=30nr' is not FREQ=DB (e.g. 1000=35)")
        ),
        (
            variant(adding: "gain-left: 500=20 1000=30 2000=40 4000=50"),
            PrescriptionError(line: 5, "'gain-left' is only allowed with 'rule: explicit' (this one is 'nal-r')")
        ),
        (
            "RIBBIT-RX 1\nname: a\nenv: quiet\nrule: explicit\n",
            PrescriptionError(line: 4, "'rule: explicit' needs 'gain-left' and/or 'gain-right'")
        ),
        (
            "RIBBIT-RX 1\nname: a\nenv: quiet\nrule: explicit\ngain-right: 500=10 1000=20 2000=58 4000=30\n",
            PrescriptionError(
                line: 5,
                "'gain-right': +58 dB at 2000 Hz is above ribbit's maximum gain of +50 dB (a typo?); a rule's gains above it play at it")
        ),
        (
            "RIBBIT-RX 1\nname: a\nenv: quiet\nrule: explicit\ngain-right: 500=-35 1000=20 2000=30 4000=30\n",
            PrescriptionError(line: 5, "'gain-right': -35 dB at 500 Hz is below the lowest allowed gain of -30 dB")
        ),
    ]

    @Test(arguments: failures.indices)
    func malformedInputGetsOneClearError(_ index: Int) {
        let (text, expected) = Self.failures[index]
        #expect(throws: expected) { try parse(text) }
    }

    @Test func invalidUTF8AndOversizedPayloadsAreRefused() {
        #expect(throws: PrescriptionError(line: nil, "the prescription is not valid UTF-8 text")) {
            try Prescription.parse(Array(minimal.utf8) + [0xFF, 0xFE])
        }
        let huge = variant(adding: "note: " + String(repeating: "a", count: 5000))
        #expect(throws: PrescriptionError(line: nil, "the prescription is \(huge.utf8.count) bytes; the limit is 4096")) {
            try parse(huge)
        }
    }
}

/// Inputs the fuzzer (make fuzz) found crashing or breaking the round trip, kept so they stay fixed.
@Suite struct FuzzFindingsTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FuzzFindings")

    @Test func everyFindingParsesOrIsRefusedAndRoundTrips() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.folder, includingPropertiesForKeys: nil)
        #expect(!files.isEmpty)
        for file in files {
            let bytes = Array(try Data(contentsOf: file))
            guard let rx = try? Prescription.parse(bytes) else { continue }
            #expect(throws: Never.self, "\(file.lastPathComponent)") { try parse(rx.text) }
            #expect((try? parse(rx.text)) == rx, "\(file.lastPathComponent)")
        }
    }
}
