import ArgumentParser
import Foundation
import RibbitAudiometry

struct AudiogramFHIRCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fhir",
        abstract: "Write a hearing test as a FHIR R4 bundle, for a doctor's records system.",
        discussion: """
            A Bundle (type collection) with the audiogram panel (LOINC 89015-2) and one Observation \
            per ear and frequency (dB HL; a no response as dataAbsentReason with the level tested), \
            status preliminary, the headphones, calibration and reliability flags in every \
            Observation, and the note that this is a self-administered screening, not a clinical audiogram.
            """)

    @Argument(help: ArgumentHelp("The test's id (`ribbitd audiogram list`).", valueName: "ID")) var id: Int64
    @Option(
        name: .shortAndLong, help: ArgumentHelp("The bundle (FILE.json).", valueName: "FILE.json"), completion: .file(extensions: ["json"]))
    var output: String
    @Option(help: ArgumentHelp("The patient's name, as a Patient resource the Observations refer to.", valueName: "NAME"))
    var patient: String?

    func run() throws {
        guard (output as NSString).pathExtension.lowercased() == "json" else {
            throw RibbitError.usage("\(output): the bundle is JSON; name it FILE.json; nothing written")
        }
        let record = try findHearingTest(id)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bundle = FHIRAudiogram.bundle(record, patientName: patient)
        let data: Data
        do { data = try encoder.encode(bundle) } catch {
            throw RibbitError(message: "internal error: cannot encode the FHIR bundle (\(error))", exitCode: ExitCode(70))
        }
        try RxMakeCommand.writeText(data + Data("\n".utf8), to: output)
        print("wrote \(output): FHIR R4 bundle of hearing test \(id), \(bundle.entry.count) resources")
    }
}
