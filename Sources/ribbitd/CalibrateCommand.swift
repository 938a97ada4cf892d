import ArgumentParser
import Foundation
import Glibc
import RibbitControl
import RibbitDumpFiles
import RibbitMonitor
import RibbitPrescription
import RibbitSettings

struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Measure the headphones and the microphone with a sound level meter and store them as a profile.",
        discussion: """
            Without options it walks you through: the daemon plays a tone in one ear (1 kHz, then 250, 500, \
            2000, 4000 and 6000 Hz), you type what the sound level meter reads at the ear (an ear simulator \
            or coupler); then you hold a calibrator (94 or 114 dB SPL at 1 kHz) to the microphone and the \
            daemon reads the input level. The hearing aid is off while a tone plays. Tones are clamped to \
            -20 dBFS and to the output ceiling in force, fade in and out, and stop by themselves after at \
            most 60 s. The profile goes to calibration.toml beside ribbitd.conf (ribbitd.conf itself is never \
            rewritten); restart the daemon to use it. For scripts: --play starts a tone and returns; \
            --reading stores one reading; --microphone measures the microphone.
            """)

    @Option(help: ArgumentHelp("The profile to write (default: the one in use, else \"headphones\").", valueName: "NAME"))
    var profile: String?
    @Option(help: "The ear the tone plays in.")
    var ear: Ear?
    @Option(help: ArgumentHelp("The tone's frequency, Hz.", valueName: "HZ"))
    var frequency: Double = 1000
    @Option(parsing: .unconditional, help: ArgumentHelp("The tone's level, dBFS (at most -20).", valueName: "DBFS"))
    var level: Double = -30
    @Flag(help: "Play the tone (--ear, --frequency, --level, --seconds) and return at once.")
    var play = false
    @Option(help: ArgumentHelp("How long --play plays, at most 60 s.", valueName: "SECONDS"))
    var seconds: Double = 30
    @Flag(help: "Stop the tone.")
    var stop = false
    @Option(help: ArgumentHelp("The sound level meter's reading for the tone (--ear, --frequency, --level), dB SPL.", valueName: "DB"))
    var reading: Double?
    @Flag(help: "Measure the microphone now: hold the calibrator to it first (--calibrator).")
    var microphone = false
    @Option(help: ArgumentHelp("The calibrator's level at 1 kHz, dB SPL.", valueName: "DB"))
    var calibrator: Double = 94
    @Option(
        help: ArgumentHelp("The config file the daemon reads (calibration.toml goes beside it).", valueName: "FILE"), completion: .file())
    var config: String?

    static let frequencies = [1000.0, 250, 500, 2000, 4000, 6000]

    func validate() throws {
        guard ControlProtocol.toneFrequencies.contains(frequency) else { throw ValidationError("--frequency is from 20 to 20000 Hz") }
        guard level.isFinite, level <= ControlProtocol.toneMaxLevelDBFS, level >= -80 else {
            throw ValidationError("--level is from -80 to \(Prescription.number(ControlProtocol.toneMaxLevelDBFS)) dBFS (a safety limit)")
        }
        guard seconds > 0, seconds <= ControlProtocol.toneMaxSeconds else { throw ValidationError("--seconds is from 0 to 60") }
        if let reading { guard (0...140).contains(reading) else { throw ValidationError("--reading is a level from 0 to 140 dB SPL") } }
        guard (60...140).contains(calibrator) else { throw ValidationError("--calibrator is a level from 60 to 140 dB SPL (94 or 114)") }
        if (play || reading != nil) && ear == nil { throw ValidationError("say which ear: --ear left or --ear right") }
        if [play, stop, reading != nil, microphone].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --play, --stop, --reading and --microphone")
        }
        if let profile, profile.isEmpty || !profile.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) {
            throw ValidationError("a profile name holds letters, digits, - _ and . only")
        }
    }

    func run() throws {
        let paths = RibbitPaths()
        let configuration = try loadConfig(paths, explicitPath: config)
        let file = CalibrationFile.path(besideConfig: config ?? paths.configFile)
        let name = profile ?? configuration.calibration ?? "headphones"
        var stored = configuration.profiles[name] ?? CalibrationProfile(name: name)
        if stop {
            _ = try sendToDaemon(.tone(.stop))
            print("tone stopped; the hearing aid plays again")
            return
        }
        if play, let ear {
            let status = try playTone(frequency, levelDBFS: level, ear: ear, seconds: seconds)
            let played = status?.tone?.levelDBFS ?? level
            print(
                "playing \(Prescription.number(frequency)) Hz at \(Prescription.number(played)) dBFS in the \(ear.rawValue) ear for \(Prescription.number(seconds)) s"
            )
            return
        }
        if let reading, let ear {
            try record(reading: reading, ear: ear, frequency: frequency, level: level, in: &stored)
        } else if microphone {
            stored.inputDBSPL = try measureMicrophone()
        } else {
            try walkThrough(&stored)
        }
        stored.measured = Self.today()
        do { try CalibrationFile.save(stored, to: file) } catch { throw RibbitError.cannotCreate(error.description) }
        print(
            "stored profile \(name) in \(file): output \(CalibrationProfile.format(stored.outputLeftDBSPL)) / \(CalibrationProfile.format(stored.outputRightDBSPL)) dB SPL, input \(CalibrationProfile.format(stored.inputDBSPL)) dB SPL at 0 dBFS"
        )
        if let chosen = configuration.calibration, chosen != name, configuration.profiles[chosen] != nil,
            (try? CalibrationFile.load(file).selected) != chosen
        {
            print("note: ribbitd.conf selects calibration = \"\(chosen)\"; set it to \"\(name)\" there to use this one")
        }
        print("restart the daemon to use it (systemctl --user restart ribbitd)")
    }

    /// A reading for a tone at `level` dBFS: at 1 kHz the ear's level at 0 dBFS; elsewhere the
    /// response re 1 kHz.
    func record(reading: Double, ear: Ear, frequency: Double, level: Double, in profile: inout CalibrationProfile) throws {
        let atFullScale = reading - level
        if let problem = CalibrationProfile.implausibility(
            of: atFullScale,
            what: "\(ear.rawValue) ear: a reading of \(Prescription.number(reading)) dB SPL for a \(Prescription.number(level)) dBFS tone")
        {
            throw RibbitError.data("\(problem); check the meter's reading and that it sits on the ear simulator; nothing stored")
        }
        if frequency == 1000 {
            if ear == .left { profile.outputLeftDBSPL = atFullScale } else { profile.outputRightDBSPL = atFullScale }
            return
        }
        let reference = ear == .left ? profile.outputLeftDBSPL : profile.outputRightDBSPL
        let relative = atFullScale - reference
        guard CalibrationProfile.responseRange.contains(relative) else {
            let range = CalibrationProfile.responseRange
            throw RibbitError.data(
                "\(Prescription.number(frequency)) Hz would be \(Prescription.number(relative)) dB re 1 kHz, outside the "
                    + "\(Int(range.lowerBound)) to +\(Int(range.upperBound)) dB a headphone gives; measure 1 kHz in this ear first and check the reading; nothing stored"
            )
        }
        let hz = Int(frequency.rounded())
        if ear == .left { profile.responseLeft[hz] = relative } else { profile.responseRight[hz] = relative }
    }

    /// A steady tone through the daemon (`levelDBFS` nil: silence, the input metered); the status after it.
    func playTone(_ hz: Double, levelDBFS: Double?, ear: Ear? = nil, seconds: Double) throws(RibbitError) -> DaemonStatus? {
        let signal: ToneSignal
        do throws(RequestError) {
            signal = try ToneSignal(
                frequencyHz: hz, levelDBFS: levelDBFS, ear: ear.map { ToneEar($0) } ?? .both, timing: .steady(seconds: seconds))
        } catch {
            throw RibbitError(error)
        }
        return try sendToDaemon(.tone(.play(signal)))
    }

    /// Meters the input for about a second while nothing plays; the level at 0 dBFS. Only a
    /// steady 1 kHz tone well above the room counts (`CalibratorCheck`), and only a plausible
    /// result is kept.
    func measureMicrophone() throws -> Double {
        _ = try playTone(1000, levelDBFS: nil, seconds: 5)
        defer { _ = try? sendToDaemon(.tone(.stop)) }
        if let problem = try Self.calibratorProblem() { throw RibbitError.data("\(problem); nothing stored") }
        var levels: [Double] = []
        let deadline = Date().addingTimeInterval(4)
        usleep(700_000)  // the switch and a full meter window
        while levels.count < 3, Date() < deadline {
            if let input = try sendToDaemon(.status).tone?.inputDBFS, let loudest = input.max(), loudest > -200 {
                levels.append(loudest)
            }
            usleep(300_000)
        }
        guard !levels.isEmpty, let loudest = levels.max() else {
            throw RibbitError.unavailable("the daemon reports no input level; is the microphone connected (`ribbitd ports`)?")
        }
        guard loudest > -90 else {
            throw RibbitError.data("the input is silent (\(Prescription.number(loudest)) dBFS); is the calibrator on?")
        }
        let mean = levels.reduce(0, +) / Double(levels.count)
        print(String(format: "input reads %.1f dBFS for %.1f dB SPL", mean, calibrator))
        if let problem = CalibrationProfile.implausibility(of: calibrator - mean, what: "the microphone") {
            throw RibbitError.data(
                "\(problem); is the calibrator (\(Prescription.number(calibrator)) dB SPL) on the microphone and switched on? nothing stored"
            )
        }
        return calibrator - mean
    }

    /// Listens to the microphone through the daemon's dump for half a second and says what
    /// is wrong when it is not a calibrator's tone (nil: it is).
    static func calibratorProblem() throws(RibbitError) -> String? {
        let stream: DumpStream
        do { stream = try DumpStream.open(socketPath: RibbitPaths().socketPath) } catch {
            throw RibbitError.unavailable("cannot listen to the microphone through the daemon: \(error)")
        }
        var check = CalibratorCheck()
        let deadline = Date().addingTimeInterval(5)
        var skipped = 0
        while check.toneDB.count < CalibratorCheck.frames, Date() < deadline {
            guard case .frame(let frame, _) = stream.next(timeoutSeconds: 1) else { continue }
            // The first frames hold sound from before the tone mode (the hearing aid's own).
            skipped += 1
            guard skipped > 4 else { continue }
            let ears = frame.ears.values.map(\.measured.inputBandsDB)
            let tone = DumpAnalyzer.bandCentersHz.firstIndex(of: 1000) ?? 0
            guard
                let louder = ears.max(by: {
                    ($0.indices.contains(tone) ? $0[tone] : -.infinity) < ($1.indices.contains(tone) ? $1[tone] : -.infinity)
                })
            else { continue }
            check.add(inputBandsDB: louder)
        }
        return check.problem
    }

    /// The interactive walk: both ears at every frequency, then the microphone.
    func walkThrough(_ profile: inout CalibrationProfile) throws {
        print(
            """
            Calibrating profile \(profile.name). You need a sound level meter (Z or C weighting, so every frequency \
            reads true; slow) on an ear simulator or coupler with the headphones on it, and for the microphone a calibrator.
            Each tone plays at \(Prescription.number(level)) dBFS for up to 60 s. Type the meter's reading in dB SPL \
            and Enter; Enter alone plays it again; s skips; q stops.
            """)
        walk: for ear in Ear.allCases {
            for hz in Self.frequencies {
                while true {
                    // What plays (a strict ceiling clamps it, 1 dB under) is what the reading measured.
                    let played =
                        try playTone(hz, levelDBFS: level, ear: ear, seconds: ControlProtocol.toneMaxSeconds)?.tone?.levelDBFS ?? level
                    print("\(ear.rawValue) ear, \(Prescription.number(hz)) Hz: reading (dB SPL)? ", terminator: "")
                    fflush(nil)
                    guard let line = readLine()?.trimmingCharacters(in: .whitespaces), line != "q" else { break walk }
                    if line.isEmpty { continue }
                    if line == "s" { break }
                    guard let value = Double(line), (0...140).contains(value) else {
                        print("a number of dB SPL, e.g. 72.5")
                        continue
                    }
                    do {
                        try record(reading: value, ear: ear, frequency: hz, level: played, in: &profile)
                        break
                    } catch let error as RibbitError { print(error.message) }
                }
            }
        }
        _ = try sendToDaemon(.tone(.stop))
        print(
            "Microphone: hold the calibrator (\(Prescription.number(calibrator)) dB SPL, 1 kHz) to it, switch it on, then Enter (s skips). ",
            terminator: "")
        fflush(nil)
        if let line = readLine(), line.trimmingCharacters(in: .whitespaces) != "s" { profile.inputDBSPL = try measureMicrophone() }
    }

    static func today() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return String(format: "%04d-%02d-%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
    }
}
