import Foundation
import RibbitSettings
import RibbitTestSupport
import Testing

@Suite struct DaemonConfigTests {
    @Test func readsEveryKey() throws {
        let config = try DaemonConfig.parse(
            """
            # ribbitd.conf
            input = ["system:capture_1", "system:capture_2"]
            output = "system:playback_1"
            connect = false
            client-name = "ribbit-left"
            log-level = "debug"
            """, path: "ribbitd.conf")
        #expect(config.inputs == ["system:capture_1", "system:capture_2"])
        #expect(config.outputs == ["system:playback_1"])
        #expect(config.connect == false)
        #expect(config.clientName == "ribbit-left")
        #expect(config.logLevel == "debug")
        #expect(try DaemonConfig.parse("", path: "empty") == DaemonConfig())
    }

    /// The data log is on by default; `log = false` turns it off; anything but a boolean is a mistake.
    @Test func logIsOnUnlessFalse() throws {
        #expect(DaemonConfig().log == true)
        #expect(try DaemonConfig.parse("log = false\n", path: "ribbitd.conf").log == false)
        #expect(try DaemonConfig.parse("log = true\n", path: "ribbitd.conf").log == true)
        #expect(throws: ConfigError.self) { try DaemonConfig.parse("log = \"off\"\n", path: "ribbitd.conf") }
        #expect(DaemonConfig().logIntervalSeconds == 60)
        #expect(try DaemonConfig.parse("log-interval = 300\n", path: "ribbitd.conf").logIntervalSeconds == 300)
        for wrong in ["1", "7200", "\"often\""] {
            #expect(throws: ConfigError.self) { try DaemonConfig.parse("log-interval = \(wrong)\n", path: "ribbitd.conf") }
        }
    }

    /// What makes it TOML rather than `key = value` lines: comments after values, literal
    /// strings, other spacing, arrays over several lines.
    @Test func readsTOMLAsTOMLToolsWriteIt() throws {
        let config = try DaemonConfig.parse(
            """
            input = [  # left, then right
                'system:capture_1',
                "system:capture_2",
            ]
            output='system:playback_1'   # one port feeds... no: the left and right output
            connect = true # wire it
            require-signed = true
            "log-level" = "notice"
            """, path: "ribbitd.conf")
        #expect(config.inputs == ["system:capture_1", "system:capture_2"])
        #expect(config.outputs == ["system:playback_1"])
        #expect(config.connect == true)
        #expect(config.requireSigned == true)
        #expect(config.logLevel == "notice")
    }

    @Test(arguments: [
        (
            "inptu = \"a:b\"",
            "c:1: unknown key `inptu`; known: input, output, connect, client-name, log-level, require-signed, calibration, log, log-interval, profile"
        ),
        (
            "connect = false\n[jack]\nname = \"x\"",
            "c:2: unknown table `[jack]`; known: input, output, connect, client-name, log-level, require-signed, calibration, log, log-interval, profile"
        ),
        (
            "input",
            "c:1:6: Error while parsing key-value pair: encountered end-of-file (values are \"quoted strings\", true or false, or [\"lists\"]; see ribbitd.conf(5))"
        ),
        (
            "connect = yes",
            "c:1:11: Error while parsing value: could not determine value type (values are \"quoted strings\", true or false, or [\"lists\"]; see ribbitd.conf(5))"
        ),
        ("connect = \"false\"", "c:1: connect must be true or false (without quotes)"),
        ("client-name = 3", "c:1: client-name must be a \"quoted string\""),
        (
            "input = system:capture_1",
            "c:1:9: Error while parsing value: could not determine value type (values are \"quoted strings\", true or false, or [\"lists\"]; see ribbitd.conf(5))"
        ),
        ("input = \"a:1,b:2,c:3\"", "c:1: give one or two JACK ports as client:port (left, then right); `ribbitd ports` lists them"),
        (
            "input = [\"a:1\"",
            "c:1:15: Error while parsing array: encountered end-of-file (values are \"quoted strings\", true or false, or [\"lists\"]; see ribbitd.conf(5))"
        ),
        ("input = [\"a:1\", 2]", "c:1: a port list holds \"quoted\" port names"),
        ("output = \"nocolon\"", "c:1: give one or two JACK ports as client:port (left, then right); `ribbitd ports` lists them"),
        (
            "connect = true\nconnect = false",
            "c:2:11: Error while parsing key-value pair: cannot redefine existing boolean 'connect' (values are \"quoted strings\", true or false, or [\"lists\"]; see ribbitd.conf(5))"
        ),
    ])
    func refusesMistakesWithTheirLine(text: String, message: String) {
        #expect(throws: ConfigError.self) { try DaemonConfig.parse(text, path: "c") }
        do {
            _ = try DaemonConfig.parse(text, path: "c")
        } catch {
            #expect(error.description == message)
        }
    }

    /// A mistake in the file stops `ribbitd run` before anything starts: one line, EX_CONFIG.
    @Test func aMistakeInTheFileExits78() throws {
        let directory = try TestPaths.temporaryDirectory()
        let env = try TestPaths.privateHome(in: directory, base: ProcessInfo.processInfo.environment)
        let file = directory.appendingPathComponent("ribbitd.conf")
        try "connect = false  # fine\ninputs = ['system:capture_1']\n".write(to: file, atomically: true, encoding: .utf8)
        let result = try Built.run(DaemonUnderTest.binary, ["run", "--config", file.path], environment: env, timeoutSeconds: 10)
        #expect(result.status == 78)
        #expect(
            result.stderr
                == "ribbitd: error: \(file.path):2: unknown key `inputs`; known: input, output, connect, client-name, log-level, require-signed, calibration, log, log-interval, profile\n"
        )
    }

    /// Issue 26: toml++ takes the text as a C string, so a NUL ended the file there and a
    /// `require-signed = true` after it was silently dropped. Now it is refused with its line.
    @Test func aNULByteIsRefusedWithItsLine() throws {
        #expect(throws: ConfigError.self) { try DaemonConfig.parse("connect = true\n\0require-signed = true\n", path: "c") }
        do { _ = try DaemonConfig.parse("connect = true\n\0require-signed = true\n", path: "c") } catch {
            #expect(error.description.hasPrefix("c:2: holds a NUL byte"), "\(error)")
        }
        do { _ = try SettingsText.decode(Data([0x61, 0x0A, 0x62, 0xFF, 0x0A]), path: "c") } catch {
            #expect(error.description.hasPrefix("c:2: byte 4 (0xFF) is not UTF-8 text"), "\(error)")
        }
    }

    /// `ribbitd run` starts without a damaged default ribbitd.conf or calibration.toml, and
    /// says why; a file given with --config still stops it.
    @Test func theDaemonStartsWithoutADamagedDefaultFile() throws {
        let directory = try TestPaths.temporaryDirectory()
        let paths = RibbitPaths(environment: try TestPaths.privateHome(in: directory))
        try FileManager.default.createDirectory(atPath: paths.configDirectory, withIntermediateDirectories: true)
        try Data("require-signed = true\nconnect = maybe\n".utf8).write(to: URL(fileURLWithPath: paths.configFile))
        let config = try DaemonConfig.forDaemon(explicitPath: nil, paths: paths)
        #expect(config.damagedConfig?.hasPrefix("\(paths.configFile):2:") == true, "\(String(describing: config.damagedConfig))")
        #expect(config.damagedCalibration == nil)
        #expect(throws: ConfigError.self) { try DaemonConfig.forDaemon(explicitPath: paths.configFile, paths: paths) }

        try Data("calibration = \"hd25\"\n".utf8).write(to: URL(fileURLWithPath: paths.configFile))
        let calibration = CalibrationFile.path(besideConfig: paths.configFile)
        try Data("[profile.hd25\noutput-left = 104.5\n".utf8).write(to: URL(fileURLWithPath: calibration))
        let uncalibrated = try DaemonConfig.forDaemon(explicitPath: nil, paths: paths)
        #expect(uncalibrated.damagedConfig == nil)
        #expect(uncalibrated.damagedCalibration?.hasPrefix(calibration) == true, "\(String(describing: uncalibrated.damagedCalibration))")
        #expect(uncalibrated.calibrationProfile == nil)
    }
}
