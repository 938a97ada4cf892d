import RibbitPlot
import RibbitVoice
import Testing

/// The therapist's progress chart: one self-contained SVG with every series, a text
/// alternative, round ticks, nothing outside its 360-wide viewBox.
@Suite struct VoiceProgressChartTests {
    static func weeks() -> [VoiceProgressWeek] {
        let settings = VoiceSettings.standard(calibrated: true)
        // Six weeks from 2026-12-07 (a Monday), one of them empty, over the new year.
        let monday = Double(VoiceCalendar.day(.init(year: 2026, month: 12, day: 7))) * 86_400 + 10 * 3600
        var sessions: [VoiceSessionRecord] = []
        for (week, count) in [3, 2, 0, 4, 1, 5].enumerated() {
            for n in 0..<count {
                var summary = VoiceSessionSummary()
                summary.voicedSeconds = 60
                summary.secondsInTarget = 20 + Double(week) * 7 + Double(n)
                summary.attempts = 12 - week
                summary.successes = 4 + week / 2
                summary.f0LowHz = 190 - Double(week) * 8
                summary.f0HighHz = 260 + Double(week) * 15
                sessions.append(
                    VoiceSessionRecord(
                        id: Int64(sessions.count + 1), childID: 1, game: n % 2 == 0 ? .clouds : .pitch,
                        started: monday + Double(week * 7 + n) * 86_400, ended: monday + Double(week * 7 + n) * 86_400 + 300,
                        outcome: .finished,
                        settings: settings, summary: summary))
            }
        }
        return VoiceProgress.weeks(childID: 1, sessions: sessions)
    }

    @Test func theChartHasEverySeries() throws {
        let weeks = Self.weeks()
        #expect(weeks.map(\.week.label) == ["2026-W50", "2026-W51", "2026-W52", "2026-W53", "2027-W01", "2027-W02"])
        let svg = VoiceProgressChart.svg(weeks: weeks, childName: "Ema <3")
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("viewBox=\"0 0 360 ") && !svg.contains("<script") && !svg.contains("href"))
        #expect(svg.contains("<title id=\"voice-progress-title\">Progress: Ema &lt;3</title>"))
        for panel in ["sessions", "target", "attempts", "pitch"] { #expect(svg.contains("<g id=\"voice-progress-\(panel)\">"), "\(panel)") }
        // A bar for each week (the empty one a zero-height bar), a point or band for each week played.
        #expect(svg.components("class=\"voice-progress-sessions-mark\"") == 6)
        #expect(svg.contains("data-week=\"2026-W52\" data-value=\"0\""))
        #expect(svg.components("class=\"voice-progress-target-mark\"") == 5)
        #expect(svg.components("class=\"voice-progress-attempts-mark\"") == 5)
        #expect(svg.components("class=\"voice-progress-pitch-mark\"") == 5)
        #expect(svg.contains("data-week=\"2027-W02\" data-low-hz=\"150\" data-high-hz=\"335\""))
        // Axis titles, week labels and the text alternative.
        #expect(svg.contains(">Sessions per week</text>") && svg.contains(">Pitch range used (Hz)</text>"))
        #expect(svg.contains(">W50</text>") && svg.contains("weeks 2026-W50 to 2027-W02"))
        let desc = try #require(svg.slice(after: "<desc id=\"voice-progress-desc\">", before: "</desc>"))
        #expect(desc.contains("2026-W50: 3 sessions, 15 min, 35 % in target, 3 attempts per success, pitch 190-260 Hz"), "\(desc)")
        #expect(desc.contains("2026-W52: 0 sessions, 0 min."))
    }

    /// One game's figures: the pitch game was played in weeks with two or more sessions.
    @Test func oneGamesChart() throws {
        let svg = VoiceProgressChart.svg(weeks: Self.weeks(), childName: "Ema", game: .pitch)
        #expect(svg.contains("<title id=\"voice-progress-title\">Progress: Ema (pitch)</title>"))
        let bars = svg.split(separator: "class=\"voice-progress-sessions-mark\"").dropFirst().map { $0.prefix(40) }
        #expect(bars.map { $0.contains("data-value=\"0\"") } == [false, false, true, false, true, false], "\(bars)")
        #expect(svg.components("class=\"voice-progress-target-mark\"") == 4)
        // A week played but never ended draws a bar and no point, and no empty line.
        var week = Self.weeks()[0]
        week.overall = VoiceProgressFigures()
        week.overall.sessions = 1
        let interrupted = VoiceProgressChart.svg(weeks: [week], childName: "Ben")
        #expect(interrupted.components("class=\"voice-progress-target-mark\"") == 0 && !interrupted.contains("d=\"\""))
        #expect(interrupted.contains("week 2026-W50"))
    }

    /// Ticks are round numbers, and every coordinate stays inside the viewBox.
    @Test func ticksAreRoundAndNothingLeavesTheChart() throws {
        let svg = VoiceProgressChart.svg(weeks: Self.weeks(), childName: "A very long nickname that goes on and on")
        for value in svg.numbers(after: " x=\"") + svg.numbers(after: " cx=\"") + svg.numbers(after: " x1=\"")
            + svg.numbers(after: " x2=\"")
        {
            #expect(value >= 0 && value <= VoiceProgressChart.width)
        }
        for value in svg.numbers(after: " y=\"") + svg.numbers(after: " cy=\"") {
            #expect(value >= 0 && value <= VoiceProgressChart.height)
        }
        #expect(svg.contains(">350</text>") && svg.contains(">150</text>"), "pitch axis on 50 Hz steps")
        #expect(svg.contains(">100</text>"))
        let empty = VoiceProgressChart.svg(weeks: [], childName: "Ben")
        #expect(empty.contains("no sessions yet") && empty.contains("<desc id=\"voice-progress-desc\">No sessions yet.</desc>"))
    }
}

extension String {
    func numbers(after prefix: String) -> [Double] {
        split(separator: prefix, omittingEmptySubsequences: false).dropFirst().compactMap { part in
            Double(part.prefix { $0 != "\"" })
        }
    }
}
