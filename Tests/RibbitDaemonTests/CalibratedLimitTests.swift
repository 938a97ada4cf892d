import Foundation
import Glibc
import RibbitControl
import RibbitTestSupport
import Testing

/// Calibrated levels and tones end to end: one test at a time.
@Suite(.endToEnd) struct CalibrationDaemonTests {}

/// The output limit in dB SPL on the real daemon: with loud headphones (a profile where 0 dBFS
/// plays at 125 dB SPL) every mode's sample ceiling comes down to the limit through the
/// calibration, and no hostile input gets above it.
extension CalibrationDaemonTests {
    @Test func theOutputLimitInDBSPLHoldsInEveryModeThroughTheCalibration() throws {
        let server = try JackTestServer(period: 256)
        let directory = try TestPaths.temporaryDirectory()
        let config = directory.appendingPathComponent("config/ribbit")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(
            """
            calibration = "loud"

            [profile.loud]
            output-left = 125
            output-right = 125
            input = 100

            """.utf8
        ).write(to: config.appendingPathComponent("ribbitd.conf"))
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("camfit-sloping.rx").path], directory: directory)
        try daemon.waitUntilProcessing()
        // Unsigned and compressing: 117 dB SPL (OTC), so -8 dBFS; bypassed (not fitted): 111, so -14.
        for (mode, command, ceiling) in [
            ("processing", ["resume"], -8.0), ("bypassed", ["bypass", "on"], -14.0),
            ("tone", ["calibrate", "--play", "--ear", "left", "--level", "-20", "--seconds", "2.5"], -14.0),
        ] {
            let result = try daemon.ribbitd(command)
            #expect(result.status == 0, "\(mode): \(result.stderr)")
            let status = try daemon.status()
            #expect(status.ceilingDBFS == ceiling, "\(mode): ceiling \(status.ceilingDBFS ?? .nan)")
            let loudest = try Probe.loudestOutput(server)
            let limit = Float(pow(10, ceiling / 20))
            #expect(loudest <= limit, "\(mode): loudest \(20 * log10(Double(loudest))) dBFS, over \(ceiling)")
            if mode != "tone" { #expect(loudest > limit / 2, "\(mode): limited, not muted (\(loudest))") }
        }
        #expect(try daemon.status().listening?.outputLimitDBSPL == [117, 117])
        try daemon.stop()
    }
}
