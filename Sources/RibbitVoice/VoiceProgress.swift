/// Calendar arithmetic on Unix seconds for the progress record, without Foundation: the civil
/// date (proleptic Gregorian, Howard Hinnant's days-from-civil algorithm), ISO 8601 weeks and
/// timestamps at a fixed UTC offset (the therapist's local time when the figures are made).
public enum VoiceCalendar {
    public struct Date: Sendable, Equatable {
        public var year: Int, month: Int, day: Int

        public init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }
    }

    /// An ISO 8601 week: Monday to Sunday, week 1 holds the year's first Thursday.
    public struct Week: Sendable, Equatable, Hashable, Comparable {
        public var year: Int
        public var week: Int
        /// Its Monday, in days since 1970-01-01.
        public var mondayDay: Int

        /// "2026-W48".
        public var label: String { "\(year)-W" + (week < 10 ? "0" : "") + String(week) }

        public static func < (a: Week, b: Week) -> Bool { a.mondayDay < b.mondayDay }
    }

    /// Days since 1970-01-01 of a moment, at `utcOffsetSeconds` east of UTC.
    public static func day(unix: Double, utcOffsetSeconds: Int = 0) -> Int {
        Int(((unix + Double(utcOffsetSeconds)) / 86_400).rounded(.down))
    }

    public static func date(day: Int) -> Date {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return Date(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    public static func day(_ date: Date) -> Int {
        let year = date.month <= 2 ? date.year - 1 : date.year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (date.month > 2 ? date.month - 3 : date.month + 9) + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The ISO week holding a day (1970-01-01 was a Thursday).
    public static func week(day: Int) -> Week {
        let weekday = ((day + 3) % 7 + 7) % 7  // 0 = Monday
        let monday = day - weekday
        let thursday = monday + 3
        let year = date(day: thursday).year
        let week = (thursday - Self.day(Date(year: year, month: 1, day: 1))) / 7 + 1
        return Week(year: year, week: week, mondayDay: monday)
    }

    public static func week(unix: Double, utcOffsetSeconds: Int = 0) -> Week {
        week(day: day(unix: unix, utcOffsetSeconds: utcOffsetSeconds))
    }

    /// "2026-11-24T06:00:00Z", or "...+01:00" at an offset; whole seconds.
    public static func iso8601(unix: Double, utcOffsetSeconds: Int = 0) -> String {
        let local = Int((unix + Double(utcOffsetSeconds)).rounded(.down))
        let day = (local - ((local % 86_400) + 86_400) % 86_400) / 86_400
        let second = local - day * 86_400
        let d = date(day: day)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var out = "\(d.year)-\(two(d.month))-\(two(d.day))T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))"
        if utcOffsetSeconds == 0 { return out + "Z" }
        let minutes = abs(utcOffsetSeconds) / 60
        out += (utcOffsetSeconds < 0 ? "-" : "+") + two(minutes / 60) + ":" + two(minutes % 60)
        return out
    }
}

/// A week's figures, for one game or all of them.
public struct VoiceProgressFigures: Sendable, Equatable {
    public var sessions = 0
    /// Sessions that reached their end.
    public var finished = 0
    public var secondsPlayed = 0.0
    public var voicedSeconds = 0.0
    public var secondsInTarget = 0.0
    public var attempts = 0
    public var successes = 0
    /// The lowest and highest voiced f0 over the week, Hz.
    public var f0LowHz: Double? = nil
    public var f0HighHz: Double? = nil

    public init() {}

    public var minutesPlayed: Double { secondsPlayed / 60 }
    /// Time in target as a share of the voiced time, %; nil with no voice.
    public var targetPercent: Double? { voicedSeconds > 0 ? 100 * secondsInTarget / voicedSeconds : nil }
    /// Sounds made per sound that counted; nil with no success.
    public var attemptsPerSuccess: Double? { successes > 0 ? Double(attempts) / Double(successes) : nil }

    mutating func add(_ session: VoiceSessionRecord) {
        sessions += 1
        if session.outcome == .finished { finished += 1 }
        secondsPlayed += session.seconds
        guard let summary = session.summary else { return }
        voicedSeconds += summary.voicedSeconds
        secondsInTarget += summary.secondsInTarget
        attempts += summary.attempts
        successes += summary.successes
        if let low = summary.f0LowHz { f0LowHz = min(f0LowHz ?? low, low) }
        if let high = summary.f0HighHz { f0HighHz = max(f0HighHz ?? high, high) }
    }
}

/// One week of a child's progress: all games, and each game played.
public struct VoiceProgressWeek: Sendable, Equatable {
    public var week: VoiceCalendar.Week
    public var overall: VoiceProgressFigures
    public var perGame: [VoiceGameKind: VoiceProgressFigures]
}

public enum VoiceProgress {
    /// A child's weeks from the first session's to the last one's, weeks without a session
    /// included (empty), so a chart's time axis stays even. `sessions` may hold other
    /// children's: only `childID`'s count. Weeks are ISO weeks at `utcOffsetSeconds`.
    public static func weeks(childID: Int64, sessions: [VoiceSessionRecord], utcOffsetSeconds: Int = 0) -> [VoiceProgressWeek] {
        var byWeek: [Int: VoiceProgressWeek] = [:]
        for session in sessions where session.childID == childID {
            let week = VoiceCalendar.week(unix: session.started, utcOffsetSeconds: utcOffsetSeconds)
            var entry = byWeek[week.mondayDay] ?? VoiceProgressWeek(week: week, overall: .init(), perGame: [:])
            entry.overall.add(session)
            entry.perGame[session.game, default: .init()].add(session)
            byWeek[week.mondayDay] = entry
        }
        guard let first = byWeek.keys.min(), let last = byWeek.keys.max() else { return [] }
        return stride(from: first, through: last, by: 7).map {
            byWeek[$0] ?? VoiceProgressWeek(week: VoiceCalendar.week(day: $0), overall: .init(), perGame: [:])
        }
    }
}
