import ArgumentParser
import Foundation
import Glibc
import RibbitControl
import RibbitPrescription
import RibbitSettings
import RibbitVoice

struct VoiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voice",
        abstract: "Show the microphone's voice level and pitch live: the voice exercises' quick check.",
        discussion: """
            A meter in the terminal, refreshed 20 times a second: the level (dB SPL through the \
            calibration, otherwise dBFS, said on screen), whether a voice sounds (claps, knocks and \
            noise do not count), its pitch in Hz with the note, and the pitch of the last seconds. \
            It reads the same analysis the web app's voice exercises use (the daemon analyses the \
            microphone only while someone listens); the hearing aid keeps running. --json prints \
            each 10 ms frame as a line of JSON; without a terminal, a line every half second. q, \
            Ctrl-C or SIGTERM ends it.
            """)

    @Flag(help: "Print each 10 ms frame as a line of JSON on standard output.") var json = false
    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "SECONDS")) var duration: Double?

    func run() throws {
        if let duration, !(duration > 0 && duration <= 86400) {
            throw RibbitError.usage("--duration takes seconds, more than 0 and at most 86400, not \(Prescription.number(duration))")
        }
        let stop = StopSignals()
        let stream: VoiceStream
        do { stream = try VoiceStream.open(socketPath: RibbitPaths().socketPath) } catch { throw RibbitError(streamRefused: error) }
        let meter = VoiceMeter(calibration: stream.status?.calibration, live: !json && isatty(1) == 1)
        defer { meter.restore() }
        let deadline = duration.map { MonotonicClock.seconds() + $0 }
        var lastFrame = MonotonicClock.seconds()
        var frames = 0
        var ended: RibbitError?
        while deadline.map({ MonotonicClock.seconds() < $0 }) ?? true, !stop.requested, !meter.quitTyped() {
            switch stream.next(timeoutSeconds: 0.1) {
            case .timedOut:
                if MonotonicClock.seconds() - lastFrame > 1 { meter.waiting(hadFrames: frames > 0) }
                continue
            case .closed:
                ended = .unavailable("the daemon ended the voice stream (it stopped or restarted, or this client took nothing for 10 s)")
            case .unreadable:
                ended = RibbitError(
                    message: "the daemon sent a voice frame this ribbitd cannot read; is it the same version?", exitCode: ExitCode(70))
            case .frame(let frame):
                lastFrame = MonotonicClock.seconds()
                frames += 1
                if json {
                    FileHandle.standardOutput.write(ControlProtocol.encode(frame))
                } else {
                    meter.add(frame)
                }
                continue
            }
            break
        }
        meter.restore()
        if let ended { throw ended }
        if frames == 0 { throw RibbitError.unavailable("no voice frame arrived; is JACK running? (`ribbitd status`)") }
    }
}
