import ArgumentParser
import Foundation
import RibbitAudiogramReport
import RibbitAudiometry
import RibbitPrescription
import RibbitSettings

struct AudiogramReferenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference",
        abstract: "Calibrate consumer headphones biologically from a normal-hearing listener's test.",
        discussion: """
            Consumer headphones have no standard reference level (RETSPL), so their 0 dB HL is a \
            guess. A listener with normal hearing takes a test with them; this stores that test's \
            thresholds (the mean of both ears per frequency) in hearing-reference.toml, and later \
            tests with consumer headphones read those levels as 0 dB HL. Refused unless the test \
            used consumer headphones, has no reliability flag and every threshold lies from -10 to \
            +25 dB HL. The result is as good as that listener's hearing (about +-5 dB).
            """)

    @Argument(help: ArgumentHelp("The reference listener's test (`ribbitd audiogram list`).", valueName: "ID")) var id: Int64?
    @Flag(help: "Delete the stored reference: back to the uncalibrated levels.") var remove = false

    func run() throws {
        let paths = RibbitPaths()
        if remove {
            guard id == nil else { throw RibbitError.usage("--remove takes no test id") }
            let removed: Bool
            do { removed = try HearingReference.remove(paths: paths) } catch { throw RibbitError.cannotCreate(error.description) }
            print(removed ? "removed \(paths.hearingReferencePath)" : "no reference is stored (\(paths.hearingReferencePath))")
            return
        }
        guard let id else { throw RibbitError.usage("give the reference listener's test id, or --remove") }
        let record = try findHearingTest(id, paths: paths)
        let thresholds: [Int: Double]
        do { thresholds = try Self.referenceThresholds(record) } catch { throw RibbitError.data(error.description) }
        do { try HearingReference.save(thresholds, test: id, date: record.date, paths: paths) } catch {
            throw RibbitError.cannotCreate(error.description)
        }
        let levels = thresholds.keys.sorted().map { "\($0)=\(HearingTestRecord.number(thresholds[$0]!))" }
        print("wrote \(paths.hearingReferencePath): hearing test \(id)'s thresholds as 0 dB HL for consumer headphones")
        print("dB HL by Hz: \(levels.joined(separator: " "))")
    }

    /// The mean of every threshold measured per frequency, both ears and both of the 1 kHz pair
    /// (the audiogram keeps the better of the pair, which would bias a reference by up to the
    /// 5 dB the retest may differ), or why the test cannot be a reference: one line.
    static func referenceThresholds(_ record: HearingTestRecord) throws(FittingRefusal) -> [Int: Double] {
        let test = "hearing test \(record.id ?? 0)"
        guard record.transducer == .consumer else {
            throw FittingRefusal(
                "\(test) used \(record.transducerName), which have a standard reference level (RETSPL); only consumer headphones are calibrated this way"
            )
        }
        guard record.result.flags.isEmpty else {
            throw FittingRefusal("\(test) is flagged (\(record.flagsText)); a reference needs a clean test: take it again")
        }
        let range = HearingReference.normalRangeDBHL
        var sums: [Int: (total: Double, count: Double)] = [:]
        for row in record.result.frequencies {
            guard row.status == .threshold, let level = row.thresholdDBHL, range.contains(Double(level)) else {
                throw FittingRefusal(
                    "\(test): the \(row.ear.rawValue) ear's \(row.frequencyHz) Hz is \(row.levelText), outside normal hearing "
                        + "(\(Int(range.lowerBound)) to +\(Int(range.upperBound)) dB HL); a reference needs a normal-hearing listener")
            }
            let sum = sums[row.frequencyHz] ?? (0, 0)
            sums[row.frequencyHz] = (sum.total + Double(level), sum.count + 1)
        }
        guard !sums.isEmpty else { throw FittingRefusal("\(test) has no thresholds") }
        // A test measured through an earlier reference is relative to it: add it back.
        let earlier = record.biologicalReferenceDBHL ?? [:]
        return Dictionary(uniqueKeysWithValues: sums.map { ($0.key, $0.value.total / $0.value.count + (earlier[$0.key] ?? 0)) })
    }
}
