import Foundation
import RibbitStore
import RibbitTestSupport
import Testing

extension HearingTestDaemonTests {
    /// `audiogram fit --trial` through a running daemon, as `load --trial`: the proposed
    /// prescription plays as a trial and `revert` goes back. The hearing tests are written and
    /// read beside the history the daemon holds open.
    @Test func aFittedHearingTestLoadsAsATrial() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("mild-presbycusis.rx").path])
        try HearingTestStore(path: daemon.storePath).save(HearingTestRecords.reliable())
        #expect(try daemon.ribbitd(["audiogram", "list"]).stdout.contains("1   2026-11-24"))
        let fit = try daemon.ribbitd(["audiogram", "fit", "1", "--trial", "10m"])
        #expect(fit.status == 0, "\(fit.stderr)")
        #expect(fit.stdout.contains("loaded self-test 2026-11-24 (quiet) from") && fit.stdout.contains("as a trial for 10 min 0 s"))
        let status = try daemon.status()
        #expect(status.prescription?.name == "self-test 2026-11-24")
        #expect(status.trial?.revertsTo == "Mild sloping high-frequency loss")
        #expect(try daemon.ribbitd(["revert"]).status == 0)
        #expect(try daemon.status().prescription?.name == "Mild sloping high-frequency loss")
        #expect(try daemon.stop() == 0)
    }
}
