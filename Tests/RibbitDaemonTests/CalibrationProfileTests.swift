import Foundation
import RibbitFitting
import RibbitSettings
import RibbitTestSupport
import Testing

@Suite struct CalibrationProfileTests {
    static let hd25 = """
        calibration = "sennheiser-hd25"   # the profile in use
        [profile.sennheiser-hd25]
        output-left = 104.5    # dB SPL at the ear for a 0 dBFS 1 kHz sine
        output-right = 104
        input = 112.0
        response-left = { 250 = -1.0, 4000 = 2.5 }

        [profile.spare]
        output-left = 90.0
        output-right = 91.0
        input = 95.5
        """

    @Test func readsProfilesAndTheOneInUse() throws {
        let config = try DaemonConfig.parse(Self.hd25, path: "c")
        #expect(config.calibration == "sennheiser-hd25")
        #expect(config.profiles.keys.sorted() == ["sennheiser-hd25", "spare"])
        let profile = try #require(config.calibrationProfile)
        #expect(profile.outputLeftDBSPL == 104.5)
        #expect(profile.outputRightDBSPL == 104.0)
        #expect(profile.inputDBSPL == 112.0)
        #expect(profile.responseLeft == [250: -1.0, 4000: 2.5])
        #expect(profile.responseRight.isEmpty)
        #expect(config.profiles["spare"]?.inputDBSPL == 95.5)
        #expect(try DaemonConfig.parse("", path: "c").calibrationProfile == nil)
    }

    /// Open headphones: `max-gain` lowers ribbit's maximum gain for them, and survives being
    /// written back (`ribbitd calibrate` rewrites the file whole).
    @Test func openHeadphonesSayTheirMaximumGain() throws {
        let text = "calibration = \"open\"\n[profile.open]\noutput-left = 100.0\noutput-right = 100.0\ninput = 100.0\nmax-gain = 30\n"
        let profile = try #require(try DaemonConfig.parse(text, path: "c").calibrationProfile)
        #expect(profile.maxGainDB == 30 && profile.summary.hasSuffix("; at most 30.0 dB of gain (max-gain)"))
        // What the daemon and `process` fit through.
        #expect(
            profile.calibration.maximumGainDB == 30 && GainMaximum.db(calibration: profile.calibration, channel: 1, atHz: 2000).db == 30)
        #expect(profile.tomlText.contains("\nmax-gain = 30.0 "))
        let again = try DaemonConfig.parse("calibration = \"open\"\n" + profile.tomlText, path: "c").calibrationProfile
        #expect(again == profile)
        #expect(try DaemonConfig.parse(Self.hd25, path: "c").calibrationProfile?.maxGainDB == nil)
    }

    @Test(arguments: [
        (
            "[profile.a]\noutput-left = 100.0\noutput-rigth = 100.0\ninput = 100.0",
            "c:1: [profile.a]: unknown key `output-rigth`; known: output-left, output-right, input, response-left, response-right, measured, max-gain"
        ),
        (
            "[profile.a]\noutput-left = 100.0\ninput = 100.0",
            "c:1: [profile.a]: output-right is missing (dB SPL for a 0 dBFS 1 kHz sine; `ribbitd calibrate` measures it)"
        ),
        (
            "[profile.a]\noutput-left = 1004.5\noutput-right = 100.0\ninput = 100.0",
            "c:1: [profile.a]: output-left is a level in dB SPL from 80 to 135 (a real headphone or microphone; the uncalibrated default is 100), e.g. 104.5; measure again with `ribbitd calibrate`"
        ),
        (
            "[profile.a]\noutput-left = \"loud\"\noutput-right = 100.0\ninput = 100.0",
            "c:1: [profile.a]: output-left is a level in dB SPL from 80 to 135 (a real headphone or microphone; the uncalibrated default is 100), e.g. 104.5; measure again with `ribbitd calibrate`"
        ),
        (
            "[profile.a]\noutput-left = 100.0\noutput-right = 100.0\ninput = 100.0\nresponse-left = { 1k = 1.0 }",
            "c:1: [profile.a]: response-left: `1k` is not a frequency from 20 to 20000 Hz with a level from -20 to 20 dB re 1 kHz"
        ),
        (
            // A meter reading of 100 typed as 10 (40 dB SPL at 0 dBFS), a calibrator that was not on the microphone (160).
            "[profile.a]\noutput-left = 40.0\noutput-right = 100.0\ninput = 100.0",
            "c:1: [profile.a]: output-left is a level in dB SPL from 80 to 135 (a real headphone or microphone; the uncalibrated default is 100), e.g. 104.5; measure again with `ribbitd calibrate`"
        ),
        (
            "[profile.a]\noutput-left = 100.0\noutput-right = 100.0\ninput = 160.0",
            "c:1: [profile.a]: input is a level in dB SPL from 80 to 135 (a real headphone or microphone; the uncalibrated default is 100), e.g. 104.5; measure again with `ribbitd calibrate`"
        ),
        (
            "[profile.a]\noutput-left = 100.0\noutput-right = 100.0\ninput = 100.0\nresponse-left = { 4000 = 25.0 }",
            "c:1: [profile.a]: response-left: `4000` is not a frequency from 20 to 20000 Hz with a level from -20 to 20 dB re 1 kHz"
        ),
        (
            // max-gain only lowers ribbit's maximum of 50 dB (a typo of 55 does not raise it).
            "[profile.a]\noutput-left = 100.0\noutput-right = 100.0\ninput = 100.0\nmax-gain = 55",
            "c:1: [profile.a]: max-gain is the most insertion gain in dB these headphones take before they whistle, from 0 to 50 (ribbit's maximum), e.g. 30 for open headphones"
        ),
        (
            "[profile.a]\noutput-left = 100.0\noutput-right = 100.0\ninput = 100.0\nmax-gain = \"open\"",
            "c:1: [profile.a]: max-gain is the most insertion gain in dB these headphones take before they whistle, from 0 to 50 (ribbit's maximum), e.g. 30 for open headphones"
        ),
        ("profile = 3", "c:1: profile is a table: [profile.NAME] with output-left = ..."),
        ("calibration = 3", "c:1: calibration must be a \"quoted string\""),
    ])
    func refusesMistakes(text: String, message: String) {
        #expect(throws: ConfigError.self) { try DaemonConfig.parse(text, path: "c") }
        do { _ = try DaemonConfig.parse(text, path: "c") } catch { #expect(error.description == message) }
    }

    /// calibrate writes calibration.toml; ribbitd.conf, with its comments, is never rewritten,
    /// and what it says wins.
    @Test func theMeasuredFileSitsBesideTheConfigAndTheConfigWins() throws {
        let directory = try TestPaths.temporaryDirectory()
        let conf = directory.appendingPathComponent("ribbitd.conf")
        let measured = CalibrationFile.path(besideConfig: conf.path)
        #expect(measured == directory.appendingPathComponent("calibration.toml").path)
        let own = "# my comment\nconnect = false  # keep\n"
        try own.write(to: conf, atomically: true, encoding: .utf8)
        let paths = RibbitPaths(environment: ["HOME": directory.path])

        var first = CalibrationProfile(name: "hd25", outputLeftDBSPL: 101.25, outputRightDBSPL: 99.0, inputDBSPL: 110.0)
        first.responseLeft = [250: -1.5, 6000: 3.0]
        first.measured = "2026-11-23"
        try CalibrationFile.save(first, to: measured)
        try CalibrationFile.save(CalibrationProfile(name: "other", outputLeftDBSPL: 90, outputRightDBSPL: 90, inputDBSPL: 90), to: measured)
        try CalibrationFile.save(first, to: measured)  // again: replaces, selects it again

        let config = try DaemonConfig.load(explicitPath: conf.path, paths: paths)
        #expect(config.connect == false)
        #expect(config.calibration == "hd25")
        var expected = first
        expected.outputLeftDBSPL = 101.3  // stored to a tenth of a dB
        #expect(config.calibrationProfile == expected)
        #expect(config.profiles["other"]?.inputDBSPL == 90)
        #expect(try String(contentsOf: conf, encoding: .utf8) == own)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)

        // The config's own choice and its own profile of the same name win.
        try (own + "calibration = \"other\"\n[profile.hd25]\noutput-left = 80.0\noutput-right = 80.0\ninput = 80.0\n").write(
            to: conf, atomically: true, encoding: .utf8)
        let mine = try DaemonConfig.load(explicitPath: conf.path, paths: paths)
        #expect(mine.calibration == "other")
        #expect(mine.profiles["hd25"]?.outputLeftDBSPL == 80)

        try (own + "calibration = \"nope\"\n").write(to: conf, atomically: true, encoding: .utf8)
        #expect(throws: ConfigError.self) { try DaemonConfig.load(explicitPath: conf.path, paths: paths) }
        do { _ = try DaemonConfig.load(explicitPath: conf.path, paths: paths) } catch {
            #expect(error.description == "calibration = \"nope\" names no profile; known: hd25, other")
        }
    }

    /// Only calibration and profiles belong in calibration.toml.
    @Test func theMeasuredFileHoldsOnlyProfiles() throws {
        let directory = try TestPaths.temporaryDirectory()
        let file = directory.appendingPathComponent("calibration.toml")
        try "connect = false\n".write(to: file, atomically: true, encoding: .utf8)
        do {
            _ = try CalibrationFile.load(file.path)
            Issue.record("accepted connect in calibration.toml")
        } catch {
            #expect(error.description == "\(file.path):1: unknown key `connect`; known: calibration, profile")
        }
    }

    /// A damaged calibration.toml (the daemon plays uncalibrated then) does not stop
    /// `ribbitd calibrate` from writing a new one: the damaged file is kept beside it.
    @Test func savingOverADamagedFileKeepsIt() throws {
        let directory = try TestPaths.temporaryDirectory()
        let path = directory.appendingPathComponent("calibration.toml").path
        let damaged = Data("[profile.hd25\n\0output-left = 104.5\n".utf8)
        try damaged.write(to: URL(fileURLWithPath: path))
        try CalibrationFile.save(CalibrationProfile(name: "hd25", outputLeftDBSPL: 104, outputRightDBSPL: 104, inputDBSPL: 110), to: path)
        #expect(try CalibrationFile.load(path).selected == "hd25")
        #expect(FileManager.default.contents(atPath: path + ".damaged") == damaged)
    }
}
