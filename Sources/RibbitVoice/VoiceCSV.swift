/// The progress record as CSV for a spreadsheet (RFC 4180: CRLF lines, a header line, fields
/// with a comma, quote or line break quoted, quotes doubled; times ISO 8601). Pure: the web app
/// serves the text.
///
/// Text cells (a nickname, above all) that start with = + - @ (or a tab or carriage return) get
/// a leading ' so a spreadsheet shows them instead of running them as a formula (OWASP's CSV
/// injection advice). Number cells are made here and stay plain numbers: a level of -45 dBFS
/// must stay -45, not text.
public enum VoiceCSV {
    public static let eventsHeader = ["child", "child_id", "session", "game", "date", "time_s", "kind", "value"]
    public static let sessionsHeader = [
        "child", "child_id", "session", "game", "started", "ended", "minutes", "outcome", "voiced_s", "in_target_s", "in_target_pct",
        "attempts", "successes", "attempts_per_success", "f0_low_hz", "f0_high_hz",
    ]

    /// One line per event: its child, session and game, its date and time (s from the session's start).
    public static func events(
        children: [VoiceChild], sessions: [VoiceSessionRecord], events: [VoiceStoredEvent], utcOffsetSeconds: Int = 0
    ) -> String {
        let names = Dictionary(children.map { ($0.id, $0.nickname) }, uniquingKeysWith: { a, _ in a })
        let byID = Dictionary(sessions.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var out = line(eventsHeader.map(text))
        for stored in events {
            guard let session = byID[stored.sessionID] else { continue }
            let event = stored.event
            out += line([
                text(names[session.childID] ?? ""), String(session.childID), String(session.id), text(session.game.rawValue),
                text(VoiceCalendar.iso8601(unix: session.started + event.time, utcOffsetSeconds: utcOffsetSeconds)), number(event.time),
                text(event.kind.rawValue), event.value.map(number) ?? "",
            ])
        }
        return out
    }

    /// One line per session with its summary (empty figures for one never ended).
    public static func sessions(children: [VoiceChild], sessions: [VoiceSessionRecord], utcOffsetSeconds: Int = 0) -> String {
        let names = Dictionary(children.map { ($0.id, $0.nickname) }, uniquingKeysWith: { a, _ in a })
        var out = line(sessionsHeader.map(text))
        for session in sessions {
            var figures = VoiceProgressFigures()
            figures.add(session)
            let summary = session.summary
            out += line([
                text(names[session.childID] ?? ""), String(session.childID), String(session.id), text(session.game.rawValue),
                text(VoiceCalendar.iso8601(unix: session.started, utcOffsetSeconds: utcOffsetSeconds)),
                text(VoiceCalendar.iso8601(unix: session.ended, utcOffsetSeconds: utcOffsetSeconds)), number(figures.minutesPlayed),
                text(session.outcome.rawValue), summary.map { number($0.voicedSeconds) } ?? "",
                summary.map { number($0.secondsInTarget) } ?? "",
                figures.targetPercent.map(number) ?? "", summary.map { String($0.attempts) } ?? "",
                summary.map { String($0.successes) } ?? "",
                figures.attemptsPerSuccess.map(number) ?? "", summary?.f0LowHz.map(number) ?? "", summary?.f0HighHz.map(number) ?? "",
            ])
        }
        return out
    }

    /// A text cell: guarded against formulas, then quoted when it must be.
    public static func text(_ value: String) -> String {
        var cell = value
        if let first = cell.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { cell = "'" + cell }
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return cell }
        var quoted = "\""
        for c in cell { quoted += c == "\"" ? "\"\"" : String(c) }
        return quoted + "\""
    }

    /// A number with at most 3 decimals, no exponent, no trailing zeros ("12.5", "-45", "0.001").
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "" }
        let thousandths = Int((value * 1000).rounded())
        let sign = thousandths < 0 ? "-" : ""
        let magnitude = thousandths.magnitude
        var fraction = String(magnitude % 1000)
        guard fraction != "0" else { return sign + String(magnitude / 1000) }
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return sign + String(magnitude / 1000) + "." + fraction
    }

    static func line(_ cells: [String]) -> String { cells.joined(separator: ",") + "\r\n" }
}
