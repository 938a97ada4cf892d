import Foundation
import RibbitTestSupport
import Testing

/// `ribbitd verify` without --rx: what the running daemon plays (its history entry), in its
/// program, at JACK's sample rate.
@Suite struct VerifyDaemonTests {
    @Test func verifiesTheActivePrescription() throws {
        let server = try JackTestServer(sampleRate: 44100)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(server: server)
        #expect(try daemon.ribbitd(["load", TestPaths.prescription("mild-presbycusis.rx").path]).status == 0)
        #expect(try daemon.ribbitd(["program", "music"]).status == 0)
        let result = try daemon.ribbitd(["verify", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["prescriptionName"] as? String == "Mild sloping high-frequency loss")
        #expect(json["program"] as? String == "music")
        #expect(json["sampleRate"] as? Double == 44100)
        #expect((json["prescriptionText"] as? String)?.hasPrefix("RIBBIT-RX 1") == true)
    }
}
