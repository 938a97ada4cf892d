import ArgumentParser
import Foundation
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitIntake
import RibbitPrescription
import RibbitSettings
import RibbitStore
import RibbitSystem
import RibbitVerify

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Measure the hearing aid as a test box would: OSPL90, gain, distortion, noise, times, target match.",
        discussion: """
            Runs ribbit's own engine, with the code and settings the daemon runs for the prescription and through the \
            calibration in use, on generated test signals, and reports per ear what ANSI S3.22 / IEC 60118-0 measure \
            (OSPL90, full-on gain, reference test gain and frequency response, harmonic distortion, equivalent input \
            noise, attack and release, input/output curves, latency) and how the gains for speech at 50, 65 and 80 dB \
            SPL match the prescription's targets (+-5 dB; +-3 dB from 250 to 2000 Hz). Adaptive features (noise \
            reduction, the compressor's steady-noise detector) are off, as ANSI S3.22 measures; with --live the daemon \
            turns them off for the measurement and back on after. Without --rx, the prescription \
            the running daemon plays, in its program; --live measures that through the running daemon over JACK (the \
            whole path, about 3 minutes; the report says which). Writes an HTML report (-o; a two-page test-box print-out, \
            then the definitions, target curves and tables behind it; prints on A4) and \
            prints a summary, or the whole report as JSON with --json. It measures the digital processing only, not \
            the microphone or the earphones; exits 1 when the target match fails at +-5 dB.
            """
    )

    @Option(
        name: .customLong("rx"), help: ArgumentHelp("The prescription (.rx text or a QR picture).", valueName: "RX"),
        completion: .prescriptionFile)
    var prescriptionPath: String?
    @Option(
        name: .shortAndLong, help: ArgumentHelp("Write the HTML report here.", valueName: "FILE"), completion: .file(extensions: ["html"]))
    var output: String?
    @Flag(help: "With -o: write only the two-page test-box print-out, not what lies behind it.") var printOut = false
    @Flag(help: "Print the whole report as one JSON object.") var json = false
    @Option(help: "The listening program (quiet, noisy, outdoor, music; default: the daemon's, or the one the prescription's env selects).")
    var program: Program?
    @Flag(
        help: ArgumentHelp(
            "Measure through the running daemon over JACK (the whole path) instead of the engine offline.",
            discussion:
                "Disconnects the microphone and the earphones from the daemon while it measures, and puts them, the program, the volume and the adaptive features back after."
        ))
    var live = false

    func run() throws {
        let started = Date()
        if live, prescriptionPath != nil {
            throw RibbitError.usage("--live measures what the daemon plays; load the prescription (`ribbitd load RX`) or leave out --live")
        }
        if printOut, output == nil { throw RibbitError.usage("--print-out writes the print-out to a file: add -o FILE.html") }
        if let output {
            // Before measuring: a report that cannot be written is said at once.
            let directory = (output as NSString).deletingLastPathComponent
            guard FileManager.default.isWritableFile(atPath: directory.isEmpty ? "." : directory) else {
                throw RibbitError.cannotCreate("\(output): cannot write the report there (no such directory, or not writable)")
            }
        }
        let paths = RibbitPaths()
        let config = try loadConfig(paths)
        let (rx, text, trusted, daemonStatus) = try prescription(paths: paths, config: config)
        let daemonProgram = daemonStatus?.listening?.program
        let daemonRate = daemonStatus?.jack.map { Double($0.sampleRate) }.flatMap {
            EngineGeometry.supportedSampleRates.contains($0) ? $0 : nil
        }
        let profile = config.calibrationProfile
        let calibration = profile?.calibration ?? .uncalibrated
        let info = VerifyReport.CalibrationInfo(
            label: profile?.name ?? "uncalibrated, +-\(Prescription.number(CalibrationProfile.uncalibratedUncertaintyDB)) dB",
            inputDBSPLAtFullScale: calibration.inputDBSPLAtFullScale, outputLeftDBSPLAtFullScale: calibration.outputDBSPLAtFullScale[0],
            outputRightDBSPLAtFullScale: calibration.outputDBSPLAtFullScale[1],
            uncertaintyDB: profile == nil ? CalibrationProfile.uncalibratedUncertaintyDB : nil)
        var verifier = Verifier(
            prescription: rx, trusted: trusted, calibration: calibration, program: program ?? daemonProgram, sampleRate: daemonRate ?? 48000
        )
        var livePath: LiveVerifyPath?
        var signalSources: [DispatchSourceSignal] = []
        if live, let daemonStatus {
            let releaseMs = (try? verifier.plan(volumeDB: 0).compressor.settings.map(\.releaseMs).max()) ?? nil
            // Ctrl-C (or a stop) must not leave the microphone disconnected or the volume at full
            // on: from before the ports are taken, a signal stops the measurement, which restores.
            signalSources = Self.stopOnSignals()
            let path = try LiveVerifyPath(
                status: daemonStatus, program: verifier.resolvedProgram, releaseMs: releaseMs ?? 100)
            verifier.path = path
            livePath = path
        }
        defer {
            livePath?.restore()
            signalSources.forEach { $0.cancel() }
        }
        var report: VerifyReport
        do {
            let date = ISO8601DateFormatter.string(from: started, timeZone: .current, formatOptions: [.withInternetDateTime])
            report = try verifier.report(calibrationInfo: info, date: date, prescriptionText: text)
        } catch let error as RibbitError {
            throw error
        } catch {
            throw RibbitError.data("\(error)")
        }
        livePath?.restore()
        if let repeats = livePath?.repeats, repeats > 0 { report.measuredThrough += "; \(repeats) signals played again after an xrun" }
        report.runSeconds = Date().timeIntervalSince(started)
        report.wear = Self.wearSummary(dataDirectory: paths.dataDirectory)
        if let output {
            let html = printOut ? VerifyHTML.printOut(report) : VerifyHTML.render(report)
            do { try AtomicFile.write(Array(html.utf8), to: output) } catch {
                throw RibbitError.cannotCreate("\(error.description): the report was not written")
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            FileHandle.standardOutput.write((try? encoder.encode(report)) ?? Data())
            FileHandle.standardOutput.write(Data("\n".utf8))
        } else {
            print(Self.summary(report, output: output))
        }
        if !report.ears.filter(\.fitted).allSatisfy({ $0.targetMatch.allSatisfy(\.pass) }) { throw ExitCode(1) }
    }

    /// The prescription to verify: --rx (at 48 kHz), or what the daemon plays (from the history,
    /// by the id its status gives), with the trust verdict and the daemon's status (its program,
    /// and JACK's sample rate, which the daemon's engine geometry follows).
    func prescription(paths: RibbitPaths, config: DaemonConfig) throws(RibbitError) -> (Prescription, String, Bool, DaemonStatus?) {
        if let prescriptionPath {
            let intake = Intake(trusted: Intake.load(paths: paths, config: config).trusted, requireSigned: false)
            let accepted = try readPrescription(prescriptionPath, intake: intake).accepted
            return (accepted.prescription, accepted.prescription.text, accepted.isTrusted, nil)
        }
        let status: DaemonStatus
        do { status = try sendToDaemon(.status) } catch {
            throw .unavailable("\(error.message); give the prescription with --rx RX")
        }
        guard let active = status.prescription, let id = active.id else {
            throw .data("the daemon plays no prescription from the history; give one with --rx RX")
        }
        let store = try openStore(paths)
        guard let record = try? store.find(String(id)) else {
            throw .data("history entry \(id) is gone; give the prescription with --rx RX")
        }
        do {
            let payload = try record.intactPayload()
            let rx = try Prescription.parse(Array(payload.utf8))
            return (rx, payload, record.isTrusted, status)
        } catch {
            throw .data("history entry \(id) cannot be read (\(error)); give the prescription with --rx RX")
        }
    }

    /// SIGINT, SIGTERM and SIGHUP stop a live measurement (`LiveVerifyPath.interrupted`): it
    /// ends with an error, the daemon is put back as it was, and the exit status is 128 + the
    /// signal's number.
    static func stopOnSignals() -> [DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { LiveVerifyPath.interrupted.store(number, ordering: .relaxed) }
            source.resume()
            return source
        }
    }

    static func summary(_ r: VerifyReport, output: String?) -> String {
        func fixed(_ v: Double?, _ digits: Int = 1) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "-" }
        var lines = [
            "verify \(r.prescriptionName) (\(r.rule)), program \(r.program) with adaptive features off, \(r.calibration.label); \(String(format: "%.1f", r.runSeconds)) s",
            "measured      \(r.measuredThrough)",
            "latency       \(r.latency.measuredFrames) samples (\(String(format: "%.2f", r.latency.measuredMs)) ms) by impulse; reported \(r.latency.reportedFrames)"
                + (r.latency.loopFrames.map { " (through JACK, less the \($0)-frame period the test client's loop adds)" } ?? ""),
        ]
        for ear in r.ears {
            let worst = ear.targetMatch.max { abs($0.worstDeviationDB) < abs($1.worstDeviationDB) }
            lines += [
                "\(ear.ear) ear\(ear.fitted ? "" : " (not fitted)")",
                "  OSPL90        max \(fixed(ear.ospl90MaxDBSPL)) dB SPL at \(Prescription.number(ear.ospl90MaxHz)) Hz, HFA \(fixed(ear.hfaOSPL90DBSPL)) dB SPL",
                "  full-on gain  HFA \(fixed(ear.hfaFullOnGainDB)) dB (volume +\(Prescription.number(ear.fullOnVolumeDB)))",
                "  reference     test gain \(fixed(ear.referenceTestGainDB)) dB at volume \(fixed(ear.referenceVolumeDB)) (HFA at 60 dB SPL: \(fixed(ear.referenceHFAGainDB)) dB)",
                "  THD           "
                    + ear.distortion.map { "\(Prescription.number($0.hz)) Hz \(fixed($0.thdPercent, 2)) %" }.joined(separator: ", "),
                "  noise         silence in: \(ear.noise.silenceOutputDBSPL.map { fixed($0) + " dB SPL" } ?? "silence out"); EIN of the processing \(ear.noise.einDBSPL.map { fixed($0) + " dB SPL" } ?? "none added")",
                "  attack        \(fixed(ear.attackMs)) ms, release \(fixed(ear.releaseMs)) ms "
                    + (ear.timesNotJudged.map { "(\($0))" }
                        ?? "(set \(Prescription.number(ear.designedAttackMs)) / \(Prescription.number(ear.designedReleaseMs)): "
                        + [ear.attackPass, ear.releasePass].map { $0.map { $0 ? "pass" : "FAIL" } ?? "-" }.joined(separator: " / ") + ")"),
                "  target match  "
                    + ear.targetMatch.map {
                        let notes = ($0.strictPass ? [] : ["+-3 dB: fail"]) + ($0.outputLimited ? ["output limit"] : [])
                        return "\(Prescription.number($0.levelDBSPL)) dB SPL \($0.pass ? "pass" : "FAIL")"
                            + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
                    }
                    .joined(separator: ", ")
                    + (worst.map {
                        "; worst \(String(format: "%+.1f", $0.worstDeviationDB)) dB at \(Prescription.number($0.worstHz)) Hz, \(Prescription.number($0.levelDBSPL)) dB SPL"
                    } ?? ""),
            ]
            let capped = ear.targetMatch.flatMap { match in
                match.cappedRows.map {
                    "\(Prescription.number($0.hz)) Hz at \(Prescription.number(match.levelDBSPL)) dB SPL "
                        + "\(String(format: "%.1f", $0.targetGainDB - $0.deliveredGainDB)) dB short (\($0.cappedBy?.rawValue ?? ""))"
                }
            }
            if !capped.isEmpty { lines.append("  capped        " + capped.joined(separator: ", ")) }
        }
        if let w = r.wearerProgram {
            lines.append(
                "as worn       program \(w.program) with \(w.features.joined(separator: " and ")) on, a 60 dB SPL tone's gain: "
                    + "test mode / 0.25-0.5 s / after \(Prescription.number(w.steadySeconds)) s")
            for ear in Ear.plotOrder.map(\.rawValue) {
                lines.append(
                    "  \(ear)" + String(repeating: " ", count: 12 - ear.count)
                        + w.rows.filter { $0.ear == ear }.map {
                            "\(Prescription.number($0.hz)) Hz \(fixed($0.testModeGainDB)) / \(fixed($0.onsetGainDB)) / \(fixed($0.steadyGainDB)) dB"
                        }.joined(separator: ", "))
            }
        }
        if let output { lines.append("report        \(output)") }
        return lines.joined(separator: "\n")
    }

    /// The data log of the last 90 days, summed (nil without a log; a log that cannot be read
    /// is left out of the report, never a reason to refuse the measurement).
    static func wearSummary(dataDirectory: String) -> WearSummary? {
        let since = Date().addingTimeInterval(-90 * 86400)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        guard let days = try? WearLog.days(dataDirectory: dataDirectory, since: formatter.string(from: since)), let first = days.first,
            let last = days.last
        else { return nil }
        var total = WearLog.Day(date: last.date)
        for day in days { total.add(day) }
        return WearSummary(
            firstDay: first.date, lastDay: last.date, days: days.count, processingHours: total.processingSeconds.mapValues { $0 / 3600 },
            bypassedHours: total.bypassedSeconds / 3600, pausedHours: total.pausedSeconds / 3600,
            noiseReductionHours: total.noiseReductionSeconds / 3600, levelSeconds: total.levelSeconds,
            programSwitches: total.programSwitches, volumeChanges: total.volumeChanges, xruns: total.xruns, starts: total.starts)
    }
}
