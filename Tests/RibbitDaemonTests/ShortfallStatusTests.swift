import Foundation
import RibbitControl
import RibbitTestSupport
import Testing

/// `status` says what a fitting cannot play, through the daemon's calibration: a profound loss
/// (IEC 60118-15 N7) with a microphone that reads 15 dB hotter than the headphones play, so the
/// 60 dB digital bound leaves +45 dB of insertion gain, below the +50 dB maximum.
extension DaemonTests {
    @Test func statusSaysTheShortfallThroughTheCalibrationAndTheClinicalNote() throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        let config = directory.appendingPathComponent("config/ribbit")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(
            """
            calibration = "hot"

            [profile.hot]
            input = 115
            output-left = 100
            output-right = 100

            """.utf8
        ).write(to: config.appendingPathComponent("ribbitd.conf"))
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("iec-n7.rx").path], directory: directory)
        try daemon.waitUntilProcessing()
        let listening = try #require(try daemon.status().listening)
        let shortfall = try #require(listening.shortfall)
        #expect(
            shortfall.hasPrefix("right 250 Hz +") && shortfall.contains("left 8000 Hz +100.8 -> +45.0 dB at 50 dB SPL (digital gain)"),
            "\(shortfall)")
        #expect(listening.clinicalNote?.contains("cochlear-implant assessment") == true, "\(listening.clinicalNote ?? "none")")
        let text = try daemon.ribbitd(["status"])
        #expect(
            text.stdout.contains("\nshortfall     right 250 Hz +") && text.stdout.contains("\nnote          Amplification cannot"),
            "\(text.stdout)")
        try daemon.stop()
    }
}
