import Foundation
import RibbitAudiometry
import RibbitStore
import RibbitTestSupport
import Testing

/// `ribbitd audiogram fhir`: the real binary's bundle of a stored test validates as FHIR R4.
@Suite struct AudiogramFHIRCLITests {
    @Test func theBundleOfAStoredTestIsValidFHIRR4() throws {
        let directory = try TestPaths.temporaryDirectory()
        let environment = try TestPaths.privateHome(in: directory)
        let store = try HearingTestStore(path: directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path)
        let id = try store.save(HearingTestRecords.noResponseAt8k())
        let out = directory.appendingPathComponent("audiogram.json")
        let run = try Built.run(
            Ribbitd.binary, ["audiogram", "fhir", "\(id)", "-o", out.path, "--patient", "Ann Example"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("FHIR R4 bundle"))
        let json = try Data(contentsOf: out)
        let (status, output) = try FHIRValidator.validate(json)
        #expect(status == 0, "\(output)")
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("89015-2") && text.contains("Ann Example") && text.contains("not a clinical audiogram"))
        #expect(text.contains("dataAbsentReason"), "the no response at 8 kHz")

        let missing = try Built.run(Ribbitd.binary, ["audiogram", "fhir", "99", "-o", out.path], environment: environment)
        #expect(missing.status == 65 && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        let wrongName = try Built.run(
            Ribbitd.binary, ["audiogram", "fhir", "\(id)", "-o", directory.appendingPathComponent("a.xml").path], environment: environment)
        #expect(wrongName.status == 64)
    }
}
