import Testing

@testable import RibbitVoice

/// The progress figures, the calendar they rest on and the CSV export.
@Suite struct VoiceProgressTests {
    let settings = VoiceSettings.standard(calibrated: true)

    func session(
        _ id: Int64, child: Int64 = 1, game: VoiceGameKind = .clouds, started: Double, seconds: Double = 120,
        outcome: VoiceSessionOutcome = .finished,
        voiced: Double = 40, inTarget: Double = 30, attempts: Int = 8, successes: Int = 5, f0: ClosedRange<Double>? = 180...260
    ) -> VoiceSessionRecord {
        var summary = VoiceSessionSummary()
        summary.voicedSeconds = voiced
        summary.secondsInTarget = inTarget
        summary.attempts = attempts
        summary.successes = successes
        summary.f0LowHz = f0?.lowerBound
        summary.f0HighHz = f0?.upperBound
        return VoiceSessionRecord(
            id: id, childID: child, game: game, started: started, ended: started + seconds, outcome: outcome, settings: settings,
            summary: outcome == .interrupted ? nil : summary)
    }

    /// Known dates: the epoch, a leap day, the ISO week's year differing from the calendar's.
    @Test func theCalendarAgreesWithKnownDates() {
        #expect(VoiceCalendar.date(day: 0) == .init(year: 1970, month: 1, day: 1))
        #expect(VoiceCalendar.day(.init(year: 2024, month: 2, day: 29)) == 19_782)
        #expect(VoiceCalendar.date(day: 19_782) == .init(year: 2024, month: 2, day: 29))
        for day in stride(from: -800, to: 30_000, by: 37) { #expect(VoiceCalendar.day(VoiceCalendar.date(day: day)) == day) }
        // 2026-11-24 (a Tuesday) is in 2026-W48; 2027-01-01 (a Friday) is in 2026-W53; 2024-12-30 is 2025-W01.
        let tuesday = VoiceCalendar.day(.init(year: 2026, month: 11, day: 24))
        #expect(VoiceCalendar.week(day: tuesday).label == "2026-W48")
        #expect(VoiceCalendar.week(day: tuesday).mondayDay == tuesday - 1)
        #expect(VoiceCalendar.week(day: VoiceCalendar.day(.init(year: 2027, month: 1, day: 1))).label == "2026-W53")
        #expect(VoiceCalendar.week(day: VoiceCalendar.day(.init(year: 2024, month: 12, day: 30))).label == "2025-W01")
        #expect(VoiceCalendar.week(day: VoiceCalendar.day(.init(year: 2021, month: 1, day: 3))).label == "2020-W53")
        // 1_795_500_000 s is 2026-11-24T06:00:00Z.
        #expect(VoiceCalendar.iso8601(unix: 1_795_500_000) == "2026-11-24T06:00:00Z")
        #expect(VoiceCalendar.iso8601(unix: 1_795_500_000, utcOffsetSeconds: -5 * 3600 - 1800) == "2026-11-24T00:30:00-05:30")
        #expect(VoiceCalendar.iso8601(unix: -1) == "1969-12-31T23:59:59Z")
    }

    /// Sunday night in UTC+1 is already Monday: the week follows the therapist's clock, and the
    /// weeks run on across the new year (2026-W53, 2027-W01) with an empty week kept.
    @Test func weeksGroupAcrossTheYearBoundary() {
        func unix(_ y: Int, _ m: Int, _ d: Int, hour: Double) -> Double {
            Double(VoiceCalendar.day(.init(year: y, month: m, day: d))) * 86_400 + hour * 3600
        }
        let sessions = [
            session(1, started: unix(2026, 12, 21, hour: 10)),  // W52
            session(2, game: .pitch, started: unix(2026, 12, 23, hour: 10), f0: 150...320),  // W52
            session(3, started: unix(2027, 1, 3, hour: 23.5), seconds: 300),  // Sunday 23:30 UTC: W53 in UTC, 2027-W01 at +1 h
            session(4, child: 2, started: unix(2026, 12, 30, hour: 10)),  // another child
            session(5, started: unix(2027, 1, 5, hour: 9), outcome: .interrupted),  // 2027-W01
        ]
        let utc = VoiceProgress.weeks(childID: 1, sessions: sessions)
        #expect(utc.map(\.week.label) == ["2026-W52", "2026-W53", "2027-W01"])
        #expect(utc.map(\.overall.sessions) == [2, 1, 1])
        let local = VoiceProgress.weeks(childID: 1, sessions: sessions, utcOffsetSeconds: 3600)
        #expect(local.map(\.week.label) == ["2026-W52", "2026-W53", "2027-W01"])
        #expect(local.map(\.overall.sessions) == [2, 0, 2], "the empty week stays")
        let w52 = local[0]
        #expect(w52.overall.minutesPlayed == 4 && w52.overall.attempts == 16 && w52.overall.successes == 10)
        #expect(w52.overall.targetPercent == 75 && w52.overall.attemptsPerSuccess == 1.6)
        #expect(w52.overall.f0LowHz == 150 && w52.overall.f0HighHz == 320)
        #expect(w52.perGame[.pitch]?.sessions == 1 && w52.perGame[.pitch]?.f0LowHz == 150 && w52.perGame[.clouds]?.f0HighHz == 260)
        // The interrupted session counts as played time, with no figures of its own.
        let w01 = local[2].overall
        #expect(w01.sessions == 2 && w01.finished == 1 && w01.secondsPlayed == 420 && w01.attempts == 8)
        #expect(local[1].overall.targetPercent == nil && local[1].overall.attemptsPerSuccess == nil)
        #expect(VoiceProgress.weeks(childID: 9, sessions: sessions).isEmpty)
    }

    @Test func csvQuotesAndGuardsTextCells() {
        #expect(VoiceCSV.text("Ema") == "Ema")
        #expect(VoiceCSV.text("Ema, \"Emička\"") == "\"Ema, \"\"Emička\"\"\"")
        #expect(VoiceCSV.text("two\nlines") == "\"two\nlines\"")
        #expect(VoiceCSV.text("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"")
        #expect(VoiceCSV.text("+1") == "'+1" && VoiceCSV.text("-2+3") == "'-2+3" && VoiceCSV.text("@SUM(A1)") == "'@SUM(A1)")
        #expect(VoiceCSV.text("\tx") == "'\tx")
        #expect(VoiceCSV.number(-45) == "-45" && VoiceCSV.number(12.5) == "12.5" && VoiceCSV.number(0.0004) == "0")
        #expect(VoiceCSV.number(1e-3) == "0.001" && VoiceCSV.number(-0.25) == "-0.25" && VoiceCSV.number(1e9) == "1000000000")
    }

    @Test func csvFilesHaveAHeaderAndOneLinePerRow() throws {
        let child = VoiceChild(id: 1, nickname: "=cmd|' /C calc'!A0", ageYears: 6, settings: settings, created: 0)
        let sessions = [session(7, started: 1_795_500_000), session(8, game: .balloon, started: 1_795_503_600, outcome: .interrupted)]
        let events = [
            VoiceStoredEvent(sessionID: 7, event: .init(time: 0, kind: .started)),
            VoiceStoredEvent(sessionID: 7, event: .init(time: 1.25, kind: .tooQuiet, value: -52.5)),
            VoiceStoredEvent(sessionID: 8, event: .init(time: 61, kind: .balloonPopped, value: 88)),
        ]
        let eventsCSV = VoiceCSV.events(children: [child], sessions: sessions, events: events)
        let lines = eventsCSV.components(separatedBy: "\r\n")
        #expect(lines.count == 5 && lines.last == "", "a header, three events, each ended by CRLF")
        #expect(lines[0] == "child,child_id,session,game,date,time_s,kind,value")
        #expect(lines[2] == "'=cmd|' /C calc'!A0,1,7,clouds,2026-11-24T06:00:01Z,1.25,too-quiet,-52.5", "\(lines[2])")
        #expect(lines[3] == "'=cmd|' /C calc'!A0,1,8,balloon,2026-11-24T07:01:01Z,61,balloon-popped,88")
        let sessionsCSV = VoiceCSV.sessions(children: [child], sessions: sessions, utcOffsetSeconds: 3600)
        let rows = sessionsCSV.components(separatedBy: "\r\n")
        #expect(rows[0].split(separator: ",").count == VoiceCSV.sessionsHeader.count)
        #expect(
            rows[1]
                == "'=cmd|' /C calc'!A0,1,7,clouds,2026-11-24T07:00:00+01:00,2026-11-24T07:02:00+01:00,2,finished,40,30,75,8,5,1.6,180,260")
        #expect(rows[2].hasSuffix(",2,interrupted,,,,,,,,") && rows.count == 4)
    }
}

extension String {
    func components(separatedBy separator: String) -> [String] {
        split(separator: separator, omittingEmptySubsequences: false).map(String.init)
    }
}
