import ArgumentParser
import Foundation
import RibbitControl
import RibbitPrescription

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what the running daemon does: prescription, output, JACK, latency, xruns, load.",
        discussion: "Exits 69 when no daemon is running.")

    @Flag(help: "Print the status as one JSON object (docs/control-protocol.md).")
    var json = false

    func run() throws {
        let status = try sendToDaemon(.status)
        if json {
            FileHandle.standardOutput.write(ControlProtocol.encode(status))
        } else {
            print(Self.describe(status))
        }
    }

    static func describe(_ status: DaemonStatus) -> String {
        var lines = ["ribbitd \(status.version), pid \(status.pid), running for \(duration(status.uptimeSeconds))"]
        if let rx = status.prescription {
            lines.append(
                "prescription  \(rx.name) (\(rx.environment)), \(rx.rule.rawValue)" + (rx.audiologist.map { ", by \($0)" } ?? "")
                    + (rx.id.map { ", history entry \($0)" } ?? ""))
            if let signature = rx.signature { lines.append("signature     \(signature)") }
            if let trial = status.trial {
                lines.append(
                    "trial         \(duration(trial.secondsLeft)) left, then back to \(trial.revertsTo ?? "no prescription"); `ribbitd keep` or `ribbitd revert`"
                )
            }
        } else {
            lines.append("prescription  none loaded: sound passes through unchanged (`ribbitd load RX`)")
        }
        let testing = status.hearingTest.map { $0.state == .running || $0.state == .pausedForNoise } ?? false
        let output =
            switch status.output {
            case .processing where testing, .bypassed where testing: "a hearing test's tones (the hearing aid is off until it ends)"
            case .processing: status.prescription == nil ? "passing through" : "processing"
            case .paused: "paused (silent); `ribbitd resume`"
            case .bypassed: "bypassed (unprocessed sound); `ribbitd bypass off`"
            }
        lines.append("output        \(output)" + (status.ceilingDBFS.map { ", ceiling \(Prescription.number($0)) dBFS" } ?? ""))
        if let listening = status.listening {
            lines.append("program       \(ProgramCommand.describe(listening))")
            lines.append("volume        \(VolumeCommand.describe(listening))")
            let limits = listening.outputLimitDBSPL.map { Prescription.number($0) }.joined(separator: " / ")
            let compression = listening.compressing ? "compressing" : "linear (no compression)"
            let noise = listening.noiseReduction > 0 ? "noise reduction \(Int(listening.noiseReduction * 100)) %" : "no noise reduction"
            lines.append("processing    \(listening.bands) bands, \(compression), \(noise)")
            lines.append(
                "output limit  \(limits) dB SPL (left / right)" + (listening.outputLimitReason.map { ": \($0)" } ?? ""))
            if let activity = listening.activity { lines += describe(activity) }
            if let short = listening.shortfall { lines.append("shortfall     \(short)") }
            if let note = listening.clinicalNote { lines.append("note          \(note)") }
        }
        if let test = status.hearingTest, testing {
            let paused = test.state == .pausedForNoise ? ", paused: the room is too loud" : ""
            lines.append(
                "hearing test  \(test.done) of \(test.total) steps done\(paused); `ribbitd hearing-test --stop` ends it (what was measured is kept)"
            )
        }
        if let problem = status.historyProblem { lines.append("history       \(problem)") }
        for problem in status.storageProblems ?? [] { lines.append("storage       \(problem)") }
        if let calibration = status.calibration { lines.append("calibration   \(describe(calibration))") }
        if let tone = status.tone {
            let what =
                tone.levelDBFS.map {
                    "\(Prescription.number(tone.frequencyHz)) Hz at \(Prescription.number($0)) dBFS, \(tone.ear.rawValue) ear"
                }
                ?? "silent, metering the input"
            let pattern = tone.pulses.map { ", \($0) pulses of \(Prescription.number(tone.onMs ?? 0)) ms" } ?? ""
            var line = "tone          \(what)\(pattern), \(duration(tone.secondsLeft)) left; the hearing aid is off meanwhile"
            if let input = tone.inputDBSPL, input.count == 2 {
                line += String(format: "\ninput         %.1f / %.1f dB SPL (left / right)", input[0], input[1])
            }
            lines.append(line)
        }
        if let jack = status.jack {
            lines.append("jack          client \(jack.client), \(jack.sampleRate) Hz, period \(jack.period)")
            lines.append(String(format: "latency       %d samples (%.2f ms) added", jack.latencyFrames, jack.latencyMilliseconds))
            lines.append(
                String(
                    format: "load          JACK %.1f %%, ribbit %.2f %% (longest callback %.0f us)", jack.dspLoadPercent,
                    jack.ribbitLoadPercent, jack.longestCallbackMicroseconds))
            lines.append("xruns         \(jack.xruns) (\(status.totalXruns) since start)")
            if jack.missedCycles > 0 { lines.append("missed        \(jack.missedCycles) JACK cycles (the input skipped)") }
            if jack.limitedSamples > 0 { lines.append("ceiling       acted on \(jack.limitedSamples) samples") }
            if let listeners = status.dumpListeners, listeners > 0 {
                lines.append("dump          \(listeners) client(s) watching (`ribbitd dump`)")
            }
            if let listeners = status.voiceListeners, listeners > 0 {
                lines.append("voice         \(listeners) client(s) analysing the microphone (voice exercises, `ribbitd voice`)")
            }
        } else {
            lines.append("jack          not connected: \(status.jackProblem ?? "unknown"); retrying")
        }
        return lines.joined(separator: "\n")
    }

    /// What each stage did over the last second: the input, then per stage where it acted most.
    static func describe(_ activity: DaemonStatus.Activity) -> [String] {
        func number(_ dB: Double) -> String { String(format: "%.1f", abs(dB)) }
        func hz(_ band: Int) -> String { "\(Prescription.number(activity.bandCentresHz[band])) Hz" }
        /// The band where `values` is lowest, and their mean.
        func most(_ values: [Double]) -> (band: Int, mean: Double) {
            (values.indices.min { values[$0] < values[$1] } ?? 0, values.reduce(0, +) / Double(max(values.count, 1)))
        }
        guard let low = activity.inputDBSPL.min(), let high = activity.inputDBSPL.max(), !activity.bandCentresHz.isEmpty else { return [] }
        guard high > -100 else { return ["input         silence over the last second"] }
        var lines = [
            "input         \(Prescription.number(low.rounded())) to \(Prescription.number(high.rounded())) dB SPL by band, over the last second"
        ]
        let compression = most(activity.compressionDB)
        lines.append(
            activity.compressionDB[compression.band] > -0.5
                ? "compression   idle: every band at the gain for a sound at its knee"
                : "compression   turns the gain down by up to \(number(activity.compressionDB[compression.band])) dB at \(hz(compression.band)) "
                    + "(\(number(compression.mean)) dB on average) from the gain at its knee")
        let following = activity.followingSpeech.indices.filter { activity.followingSpeech[$0] >= 0.5 }
        if let first = following.first, let last = following.last {
            lines.append(
                "steady noise  in \(following.count) of \(activity.bandCentresHz.count) bands (\(hz(first)) to \(hz(last))): "
                    + "the gain follows speech, not the noise between words")
        }
        if let reduction = activity.noiseReductionDB {
            let deepest = most(reduction)
            lines.append(
                reduction[deepest.band] > -0.5
                    ? "noise         none reduced"
                    : "noise         reduced by up to \(number(reduction[deepest.band])) dB at \(hz(deepest.band)) "
                        + "(\(number(deepest.mean)) dB on average)")
        }
        let limited = activity.outputLimitDB.indices.filter { activity.outputLimitDB[$0] <= -0.1 }
        if !limited.isEmpty {
            let deepest = most(activity.outputLimitDB)
            lines.append(
                "limiting      lowered \(limited.count) band\(limited.count == 1 ? "" : "s"), by up to "
                    + "\(number(activity.outputLimitDB[deepest.band])) dB at \(hz(deepest.band)), to keep under the output limit")
        }
        return lines
    }

    /// "hd25 (input 112 dB SPL, output 104.5 / 104 dB SPL)" or what is assumed without one.
    static func describe(_ calibration: DaemonStatus.Calibration) -> String {
        let levels =
            "input \(Prescription.number(calibration.inputDBSPL)) dB SPL, output \(Prescription.number(calibration.outputLeftDBSPL)) / "
            + "\(Prescription.number(calibration.outputRightDBSPL)) dB SPL at 0 dBFS"
        guard let profile = calibration.profile else {
            return
                "uncalibrated (assumed 100 dB SPL at 0 dBFS, +-\(Prescription.number(calibration.uncertaintyDB ?? 0)) dB); `ribbitd calibrate`"
        }
        return "\(profile) (\(levels))"
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds)
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min \(s % 60) s" }
        return "\(s / 3600) h \(s / 60 % 60) min"
    }
}
