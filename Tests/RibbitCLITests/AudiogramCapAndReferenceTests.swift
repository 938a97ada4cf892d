import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSettings
import RibbitStore
import RibbitTestSupport
import Testing

/// `ribbitd audiogram fit` on a loss deeper than ribbit's +50 dB, and `ribbitd audiogram
/// reference`: the real binary on tests a seeded listener took, in a real history file.
@Suite struct AudiogramCapAndReferenceTests {
    let directory: URL
    let environment: [String: String]
    var referencePath: String { directory.appendingPathComponent("config/ribbit/hearing-reference.toml").path }

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        var environment = try TestPaths.privateHome(in: directory)
        environment["TZ"] = "UTC"
        self.environment = environment
    }

    func ribbitd(_ arguments: [String]) throws -> RunResult { try Built.run(Ribbitd.binary, arguments, environment: environment) }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Stores the records as ids 1, 2, ...
    func store(_ records: [HearingTestRecord]) throws {
        let data = directory.appendingPathComponent("data/ribbit")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let store = try HearingTestStore(path: data.appendingPathComponent("ribbit.sqlite").path)
        for record in records { try store.save(record) }
    }

    static let steep: [Int: Double] = [250: 20, 500: 25, 1000: 35, 2000: 45, 3000: 55, 4000: 60, 6000: 65, 8000: 70]
    static let normal: [Int: Double] = [250: 5, 500: 5, 1000: 0, 2000: 5, 3000: 5, 4000: 10, 6000: 10, 8000: 5]

    @Test func aSteepLossIsFittedAndRxShowShowsTheAudiogramAndTheShortfall() throws {
        let record = HearingTestRecords.record(thresholds: [.right: Self.steep, .left: Self.steep], seed: 3)
        #expect(record.result.flags.isEmpty, "flags \(record.result.flags)")
        try store([record])
        let rx = path("steep.rx")
        let fit = try ribbitd(["audiogram", "fit", "1", "-o", rx])
        #expect(fit.status == 0, "\(fit.stderr)")
        let short = try #require(fit.stdout.split(separator: "\n").first { $0.hasPrefix("short of target: ") })
        #expect(short.contains("right 8000 Hz +") && short.contains("left 8000 Hz +") && short.contains(" -> +50.0 dB at 50 dB SPL"))
        let parsed = try Prescription.parse(Array(try Data(contentsOf: URL(fileURLWithPath: rx))))
        #expect(parsed.rule == .camfit && parsed.extensions.isEmpty)

        let shown = try ribbitd(["rx", "show", "--json", rx])
        #expect(shown.status == 0, "\(shown.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as! [String: Any]
        let ears = report["ears"] as! [String: [String: Any]]
        for ear in Ear.allCases {
            let expected = Dictionary(
                uniqueKeysWithValues: record.result.frequencies.audiogram(ear: ear).map {
                    (String($0.frequencyHz), $0.thresholdDBHL!)
                })
            #expect(ears[ear.rawValue]?["thresholdsDBHL"] as? [String: Int] == expected)
        }
        // Per band, the target and what plays: soft speech at 8 kHz capped at the maximum.
        let bands = try #require(ears["right"]?["bands"] as? [[String: Any]])
        let top = try #require(bands.last)
        #expect(top["centreHz"] as? Double == 8000 && (top["target50DB"] as? Double ?? 0) > 50 && top["gain50DB"] as? Double == 50)
        #expect((top["cappedBy"] as? [Any])?.first as? String == "maximum gain")
        let text = try ribbitd(["rx", "show", rx])
        #expect(text.status == 0 && text.stdout.contains("\nshort of target (dB for speech at 50 / 65 / 80 dB SPL"))
        #expect(text.stdout.contains("  right 8000 Hz: target ") && text.stdout.contains("(maximum gain)"))
    }

    @Test func aNormalHearingTestBecomesTheReferenceAndIsRemoved() throws {
        let normal = HearingTestRecords.record(thresholds: [.right: Self.normal, .left: Self.normal], seed: 7)
        #expect(normal.result.flags.isEmpty, "flags \(normal.result.flags)")
        var insert = normal
        insert.transducer = .er3a
        let mild = HearingTestRecords.record(thresholds: [.right: Self.normal, .left: Self.normal.merging([4000: 40]) { $1 }], seed: 7)
        try store([normal, insert, HearingTestRecords.unreliable(), mild])
        // The 40 dB HL is measured near 40: outside normal hearing.
        #expect(try #require(mild.result.threshold(ear: .left, frequencyHz: 4000)?.thresholdDBHL) > 25)

        let made = try ribbitd(["audiogram", "reference", "1"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.hasPrefix("wrote \(referencePath): hearing test 1's thresholds as 0 dB HL for consumer headphones\n"))
        let loaded = try #require(try HearingReference.load(path: referencePath))
        // The mean of every measurement: both ears, and at 1 kHz both of each ear's pair.
        for (hz, _) in Self.normal {
            let levels = normal.result.frequencies.filter { $0.frequencyHz == hz }.compactMap(\.thresholdDBHL)
            #expect(levels.count == (hz == 1000 ? 4 : 2), "\(hz) Hz: \(levels)")
            #expect(loaded[hz] == Double(levels.reduce(0, +)) / Double(levels.count), "\(hz) Hz")
        }
        let text = try String(contentsOfFile: referencePath, encoding: .utf8)
        #expect(text.contains("test = 1\n") && text.contains("[thresholds]"))

        // Refused in one line, the stored reference left as it was.
        for (id, words) in [
            ("2", "hearing test 2 used ER-3A insert earphones, which have a standard reference level (RETSPL)"),
            ("3", "hearing test 3 is flagged (false-alarms"), ("4", "the left ear's 4000 Hz is "),
        ] {
            let refused = try ribbitd(["audiogram", "reference", id])
            #expect(refused.status == 65 && refused.stderr.contains(words), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1 && refused.stdout.isEmpty)
        }
        #expect(try String(contentsOfFile: referencePath, encoding: .utf8) == text)
        #expect(try ribbitd(["audiogram", "reference", "9"]).status == 65)
        #expect(try ribbitd(["audiogram", "reference"]).status == 64)

        let removed = try ribbitd(["audiogram", "reference", "--remove"])
        #expect(removed.status == 0 && removed.stdout == "removed \(referencePath)\n")
        #expect(!FileManager.default.fileExists(atPath: referencePath))
        #expect(try HearingReference.load(path: referencePath) == nil)
        // A hand edit outside normal hearing is refused by the loader, not played 60 dB off.
        try "[thresholds]\n1000 = 60.0\n".write(toFile: referencePath, atomically: true, encoding: .utf8)
        #expect { try HearingReference.load(path: referencePath) } throws: { "\($0)".contains("from -10 to 25 dB HL") }
        _ = try ribbitd(["audiogram", "reference", "--remove"])
        let again = try ribbitd(["audiogram", "reference", "--remove"])
        #expect(again.status == 0 && again.stdout.hasPrefix("no reference is stored"))
    }
}
