/// What the log says about xruns: the first one after a quiet spell at once, then at most one
/// line per window ("12 xruns in the last 10 s"), however often the audio process reports. A
/// loaded box used to log a line per stats tick: 843 lines in 12 minutes.
struct XrunSummary {
    /// The shortest time between two lines.
    let window: Double
    private var lastLine: Double?
    private var pending = 0
    /// The connection's count at the last report, to turn running totals into new xruns.
    private var seen = 0

    init(window: Double = 10) { self.window = window }

    /// A new running total from the audio process (xruns since it connected); the line to log, if any.
    mutating func update(total: Int, now: Double) -> String? {
        if total > seen { pending += total - seen }
        seen = total
        return line(now: now, total: total)
    }

    /// A new connection counts from zero again; what the old one had not reported yet is kept.
    mutating func restart() { seen = 0 }

    /// What has not been said yet, when the connection ends; nil if nothing.
    mutating func flush(now: Double) -> String? {
        guard pending > 0 else { return nil }
        return report(now: now, total: seen)
    }

    private mutating func line(now: Double, total: Int) -> String? {
        guard pending > 0 else { return nil }
        if let lastLine, now - lastLine < window { return nil }
        return report(now: now, total: total)
    }

    private mutating func report(now: Double, total: Int) -> String {
        let count = pending == 1 ? "1 xrun" : "\(pending) xruns"
        // After a quiet spell the line is about this moment; else about the window just ended.
        let when = lastLine.map { now - $0 < 2 * window ? " in the last \(Int((now - $0).rounded())) s" : "" } ?? ""
        pending = 0
        lastLine = now
        return "\(count)\(when) (\(total) since connecting to JACK)"
    }
}
