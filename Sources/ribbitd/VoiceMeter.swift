import Foundation
import RibbitControl
import RibbitVoice

/// `ribbitd voice`'s meter: the level on a bar, voicing, the pitch and its note, and the pitch
/// of the last seconds on a log-frequency strip (the web's pitch game uses the same scale).
/// Full screen on a terminal; on a dumb one or a pipe, a plain line every half second.
final class VoiceMeter {
    static let refreshSeconds = 0.05
    /// The pitch strip's span, and its frequency range (log scale).
    static let historySeconds = 6.0
    static let pitchHz = VoiceGameView.pitchDisplayHz

    private let terminal: RawTerminal?
    private let scale: String
    /// The level bar's range: 30-100 dB SPL calibrated, -90-0 dBFS otherwise.
    private let levelRange: ClosedRange<Double>
    private var history: [VoiceFrame] = []
    private var lastDraw = -Double.infinity
    private var lastLine = -Double.infinity

    init(calibration: DaemonStatus.Calibration?, live: Bool) {
        terminal = live ? RawTerminal(alwaysFullScreen: true) : nil
        // Without a profile the daemon assumes a level: the meter says dBFS rather than pretend.
        let calibrated = calibration?.profile != nil
        scale = calibrated ? "dB SPL (calibration \(calibration?.profile ?? ""))" : "dBFS (no calibration: relative levels)"
        levelRange = calibrated ? 30...100 : -90...0
    }

    func restore() { terminal?.restore() }
    func quitTyped() -> Bool { terminal?.quitTyped() ?? false }

    func waiting(hadFrames: Bool) {
        let text =
            (hadFrames ? "ribbit voice: no new frame for over a second" : "ribbit voice: waiting for the daemon's first frame")
            + " (is JACK running? `ribbitd status`)"
        guard let terminal, terminal.fullScreen else {
            if MonotonicClock.seconds() - lastLine > 5 {
                print(text)
                lastLine = MonotonicClock.seconds()
            }
            return
        }
        terminal.emit("\u{1B}[H" + text + "\u{1B}[K")
    }

    func add(_ frame: VoiceFrame) {
        history.append(frame)
        if let first = history.first, frame.time - first.time > Self.historySeconds {
            history.removeFirst(history.firstIndex { frame.time - $0.time <= Self.historySeconds } ?? 0)
        }
        let now = MonotonicClock.seconds()
        guard let terminal, terminal.fullScreen else {
            guard now - lastLine >= 0.5 else { return }
            lastLine = now
            print(Self.line(frame, scale: scale))
            return
        }
        guard now - lastDraw >= Self.refreshSeconds else { return }
        lastDraw = now
        let (columns, rows) = RawTerminal.size()
        terminal.draw(render(columns: columns, rows: rows, colors: terminal.colors))
    }

    static func line(_ frame: VoiceFrame, scale: String) -> String {
        let unit = frame.calibrated ? "dB SPL" : "dBFS"
        let pitch = frame.f0Hz.map { String(format: "voice %.0f Hz %@", $0, note($0)) } ?? (frame.voiced ? "voice" : "no voice")
        return String(format: "%.1f s  level %.1f %@  %@  clarity %.2f", frame.time, frame.levelDB, unit, pitch, frame.clarity)
    }

    /// The nearest note, A4 = 440 Hz ("G#3").
    static func note(_ hz: Double) -> String {
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        let midi = Int((69 + 12 * log2(hz / 440)).rounded())
        return names[((midi % 12) + 12) % 12] + String(midi / 12 - 1)
    }

    private func render(columns: Int, rows: Int, colors: Bool) -> [String] {
        guard let frame = history.last else { return [] }
        let width = max(20, min(columns, 100) - 12)
        func paint(_ text: String, _ sgr: String) -> String { colors ? "\u{1B}[\(sgr)m" + text + "\u{1B}[0m" : text }
        let fraction =
            (min(max(frame.levelDB, levelRange.lowerBound), levelRange.upperBound) - levelRange.lowerBound)
            / (levelRange.upperBound - levelRange.lowerBound)
        let filled = Int((fraction * Double(width)).rounded())
        let bar = paint(String(repeating: "█", count: filled), frame.voiced ? "32" : "2") + String(repeating: "·", count: width - filled)
        var ticks = [Character](repeating: " ", count: width + 6)
        for value in stride(from: levelRange.lowerBound, through: levelRange.upperBound, by: 10) {
            let at = Int(((value - levelRange.lowerBound) / (levelRange.upperBound - levelRange.lowerBound) * Double(width)).rounded())
            for (offset, character) in String(Int(value)).enumerated() where at + offset < ticks.count { ticks[at + offset] = character }
        }
        var lines = [
            String(("ribbit voice  " + scale).prefix(columns - 10)) + "  q: quit",
            "",
            "  level  " + String(format: "%6.1f", frame.levelDB),
            "         " + bar,
            "         " + String(ticks),
            "",
            "  voice  " + (frame.voiced ? paint("yes", "1;32") : "no ") + String(format: "   clarity %.2f", frame.clarity),
            "  pitch  " + (frame.f0Hz.map { String(format: "%.0f Hz  %@", $0, Self.note($0)) } ?? "-"),
            "",
            "  pitch, last \(Int(Self.historySeconds)) s (\(Int(Self.pitchHz.lowerBound))-\(Int(Self.pitchHz.upperBound)) Hz, log):",
        ]
        let stripRows = max(4, min(12, rows - lines.count - 1))
        let stripWidth = width
        var grid = [[Character]](repeating: [Character](repeating: " ", count: stripWidth), count: stripRows)
        let end = frame.time
        let logLow = log(Self.pitchHz.lowerBound), logHigh = log(Self.pitchHz.upperBound)
        for old in history {
            guard let f0 = old.f0Hz else { continue }
            let column = Int(((old.time - (end - Self.historySeconds)) / Self.historySeconds * Double(stripWidth - 1)).rounded())
            let height = (log(min(max(f0, Self.pitchHz.lowerBound), Self.pitchHz.upperBound)) - logLow) / (logHigh - logLow)
            let row = stripRows - 1 - Int((height * Double(stripRows - 1)).rounded())
            if (0..<stripWidth).contains(column) { grid[row][column] = "•" }
        }
        for (index, row) in grid.enumerated() {
            let label =
                index == 0
                ? String(format: "%5.0f ", Self.pitchHz.upperBound)
                : index == stripRows - 1 ? String(format: "%5.0f ", Self.pitchHz.lowerBound) : "      "
            lines.append("   " + label + "│" + paint(String(row), "36"))
        }
        return lines.map { $0 }
    }
}
