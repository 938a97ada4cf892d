import ArgumentParser
import Foundation
import RibbitAudiogramReport
import RibbitAudiometry
import RibbitPrescription
import RibbitSettings
import RibbitStore

/// `ribbitd audiogram ...`: the stored hearing tests, read without the daemon.
struct AudiogramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audiogram",
        abstract: "The hearing tests you took: list, show, fit, a report, a FHIR bundle, calibrate headphones.",
        discussion: """
            Every result is self-measured and in situ: a screening, not a clinical audiogram; every \
            output says so. `ribbitd hearing-test` takes a test.
            """,
        subcommands: [
            AudiogramListCommand.self, AudiogramShowCommand.self, AudiogramFitCommand.self, AudiogramReportCommand.self,
            AudiogramFHIRCommand.self, AudiogramReferenceCommand.self,
        ]
    )
}

/// The hearing tests in the history's file. Reading only: no lock, so it works while the daemon runs.
func openHearingTests(_ paths: RibbitPaths) throws(RibbitError) -> HearingTestStore {
    do { return try HearingTestStore(path: paths.storePath) } catch {
        throw .noInput("cannot read the hearing tests in \(paths.storePath) (\(error))")
    }
}

/// One stored test, or the one-line error that names `ribbitd audiogram list`.
func findHearingTest(_ id: Int64, paths: RibbitPaths = RibbitPaths()) throws(RibbitError) -> HearingTestRecord {
    let store = try openHearingTests(paths)
    do { return try store.find(id: id) } catch { throw .data("\(error)") }
}
