import Foundation
import RibbitControl

/// `dump`'s progress on a terminal's stderr: "dump: 2.5 of 5.0 s, 50 frames", rewritten in place
/// with a carriage return (no escape codes, so TERM=dumb shows it too), twice a second.
final class DumpProgress {
    private let duration: Double?
    private var lastShown = -Double.infinity
    private var width = 0

    init(duration: Double?) { self.duration = duration }

    func show(frames: Int, seconds: Double) {
        let now = MonotonicClock.seconds()
        guard now - lastShown >= 0.5 else { return }
        lastShown = now
        let total = duration.map { " of \(String(format: "%.1f", $0))" } ?? ""
        let stop = duration == nil ? "; Ctrl-C ends it" : ""
        write("dump: \(String(format: "%.1f", seconds))\(total) s, \(frames) frames\(stop)")
    }

    /// Blanks the line, so the summary starts on a clean one.
    func clear() {
        guard width > 0 else { return }
        FileHandle.standardError.write(Data(("\r" + String(repeating: " ", count: width) + "\r").utf8))
        width = 0
    }

    private func write(_ text: String) {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        FileHandle.standardError.write(Data(("\r" + text + padding).utf8))
        width = text.count
    }
}
