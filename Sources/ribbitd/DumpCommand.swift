import ArgumentParser
import Foundation
import Glibc
import RibbitControl
import RibbitDumpFiles
import RibbitMonitor
import RibbitPrescription
import RibbitSettings

struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Watch what the running daemon does to the sound: spectra, levels, gains (live, JSON, CSV or SVG).",
        discussion: """
            Without options: a live view in the terminal, refreshed 10 times a second: third-octave \
            bars of input and output per ear with the target marked, levels, latency, xruns and the \
            prescription; q, Ctrl-C or SIGTERM ends it. --json prints every frame (20 a second) as \
            a line of JSON (docs/dump-format.md); --csv writes a row per frame and ear; --svg writes \
            a plot of the spectra and gains averaged over the dump, with the audiogram. The daemon \
            analyses sound only while a dump runs; its audio thread then copies each period into a \
            ring it never waits on. `ribbitd process --dump DIR` writes the same for a file.
            """)

    enum EarChoice: String, ExpressibleByArgument, CaseIterable { case left, right, both }

    @Flag(help: "Print each frame as a line of JSON on standard output.") var json = false
    @Option(
        help: ArgumentHelp("Write one row per frame and ear with levels and band levels.", valueName: "FILE"),
        completion: .file(extensions: ["csv"])) var csv: String?
    @Option(
        help: ArgumentHelp("Write a plot of the spectra, gains and audiogram (averaged over the dump) at the end.", valueName: "FILE"),
        completion: .file(extensions: ["svg"]))
    var svg: String?
    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "SECONDS")) var duration: Double?
    @Option(help: "Which ear: left, right or both.") var ear: EarChoice = .both

    func run() throws {
        if let duration, !(duration > 0 && duration <= 86400) {
            throw RibbitError.usage("--duration takes seconds, more than 0 and at most 86400, not \(Prescription.number(duration))")
        }
        if !json && csv == nil && svg == nil && isatty(1) == 0 {
            throw RibbitError.usage("the live view needs a terminal; use --json, --csv FILE or --svg FILE (with --duration SECONDS)")
        }
        let ears = ear == .both ? ["left", "right"] : [ear.rawValue]
        let stop = StopSignals()  // Ctrl-C and SIGTERM end the dump normally, files complete
        let stream = try DumpStream.open()
        var recorder = try DumpRecorder(ears: ears, jsonLines: json ? .standardOutput : nil, csvPath: csv, svgPath: svg)
        let view = !json && isatty(1) == 1 ? TerminalView() : nil
        defer { view?.restore() }
        // Without the live view, a line on stderr that counts up, when someone watches it.
        let progress = view == nil && isatty(2) == 1 ? DumpProgress(duration: duration) : nil
        let deadline = duration.map { MonotonicClock.seconds() + $0 }
        var lastDraw = -Double.infinity
        var lastFrame = MonotonicClock.seconds() - 1
        var ended: RibbitError?
        while deadline.map({ MonotonicClock.seconds() < $0 }) ?? true, !stop.requested, view?.quitTyped() != true {
            switch stream.next(timeoutSeconds: 0.1) {
            case .timedOut:
                // No frame: the daemon has no JACK connection (yet, or any more).
                if MonotonicClock.seconds() - lastFrame > 1 { view?.waiting(hadFrames: recorder.frameCount > 0) }
                continue
            case .closed:
                ended = .unavailable("the daemon ended the dump (it stopped or restarted, or this client took nothing for 10 s)")
            case .unreadable:
                ended = RibbitError(
                    message: "the daemon sent a frame this ribbitd cannot read; is it the same version?", exitCode: ExitCode(70))
            case .frame(let frame, let line):
                lastFrame = MonotonicClock.seconds()
                try recorder.add(frame, line: line)
                progress?.show(frames: recorder.frameCount, seconds: recorder.seconds)
                if let view, MonotonicClock.seconds() - lastDraw >= TerminalView.refreshSeconds {
                    view.draw(frame, ears: ears)
                    lastDraw = MonotonicClock.seconds()
                }
                continue
            }
            break
        }
        view?.restore()
        progress?.clear()
        try recorder.finish(
            noFrames: .unavailable("no frame arrived, so \(svg ?? "the SVG") was not written; is JACK running? (`ribbitd status`)"))
        // On stderr with --json: stdout holds the frames.
        let summary = recorder.summary.joined(separator: "\n")
        if json { FileHandle.standardError.write(Data((summary + "\n").utf8)) } else if !summary.isEmpty { print(summary) }
        if let ended { throw ended }
    }
}

/// SIGINT and SIGTERM blocked and then polled, so either ends the loop and the files and the
/// terminal are finished properly.
struct StopSignals {
    private var set = sigset_t()

    init() {
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    var requested: Bool {
        var pending = set
        var zero = timespec()
        return sigtimedwait(&pending, nil, &zero) > 0
    }
}

extension DumpStream {
    /// The daemon's dump, its errors as the CLI reports them.
    static func open() throws(RibbitError) -> DumpStream {
        do { return try open(socketPath: RibbitPaths().socketPath) } catch { throw RibbitError(streamRefused: error) }
    }
}
