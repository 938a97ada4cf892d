import Foundation
import GRDB
import RibbitAudiometry
import RibbitStore
import RibbitTestSupport
import RibbitVoice
import Testing

/// The voice exercises' record in a real SQLite file: children, sessions and events round
/// trip, an unended session reads as interrupted, bad input is one line, and the other stores
/// share the file.
@Suite struct VoiceStoreTests {
    let path: String
    let settings = VoiceSettings.standard(calibrated: true)
    init() throws { path = try TestPaths.temporaryDirectory().appendingPathComponent("voice.sqlite").path }

    @Test func childrenRoundTripAndArchive() throws {
        let store = try VoiceStore(path: path)
        let ema = try store.addChild(nickname: "  Ema  ", ageYears: 6, settings: settings, now: 1000)
        let ben = try store.addChild(nickname: "ben, \"the dog\"", ageYears: nil, settings: .standard(calibrated: false), now: 1001)
        #expect(ema.nickname == "Ema" && ema.id != ben.id)
        #expect(try store.children() == [ben, ema], "by nickname, case-insensitive")
        var changed = ema
        changed.nickname = "Emička"
        changed.ageYears = 7
        changed.settings.tooLoudDB = 90
        try store.updateChild(changed)
        #expect(try store.child(id: ema.id) == changed)
        try store.archiveChild(id: ben.id)
        #expect(try store.children() == [changed])
        #expect(try store.children(includingArchived: true).count == 2 && store.child(id: ben.id).archived)
        #expect { try store.startSession(childID: ben.id, game: .dog) } throws: {
            "\($0)" == "child \(ben.id) is archived; restore it first"
        }
        try store.archiveChild(id: ben.id, archived: false)
        #expect(try store.children().count == 2)
        // The file stays private.
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func badInputIsOneClearLine() throws {
        let store = try VoiceStore(path: path)
        var bad = settings
        bad.tooLoudDB = 50
        let cases: [(() throws -> Void, String)] = [
            ({ try store.addChild(nickname: " \n", ageYears: 5, settings: settings) }, "a child needs a nickname"),
            ({ try store.addChild(nickname: "Ema", ageYears: 0, settings: settings) }, "age 0 is out of range: 1 to 18 years, or none"),
            ({ try store.addChild(nickname: "Ema", ageYears: 19, settings: settings) }, "age 19 is out of range: 1 to 18 years, or none"),
            (
                { try store.addChild(nickname: "Ema", ageYears: 5, settings: bad) },
                "the settings are not usable: levels must rise: quiet < target low < target high <= too loud"
            ),
            (
                { try store.addChild(nickname: "a\tb", ageYears: 5, settings: settings) },
                "a nickname cannot contain control characters (a tab or a line break)"
            ),
            (
                { try store.addChild(nickname: String(repeating: "x", count: 41), ageYears: 5, settings: settings) },
                "a nickname is at most 40 characters; this one has 41"
            ),
            ({ try store.archiveChild(id: 42) }, "no child 42 is stored"),
            ({ _ = try store.startSession(childID: 42, game: .clouds) }, "no child 42 is stored"),
            ({ try store.appendEvents(sessionID: 42, [.init(time: 0, kind: .started)]) }, "no voice session 42 is stored"),
        ]
        for (action, message) in cases {
            #expect { try action() } throws: { "\($0)" == message && !"\($0)".contains("\n") }
        }
        #expect(try store.children(includingArchived: true).isEmpty)
    }

    @Test func sessionsAndEventsRoundTrip() throws {
        let store = try VoiceStore(path: path)
        let ema = try store.addChild(nickname: "Ema", ageYears: 6, settings: settings, now: 1000)
        let other = try store.addChild(nickname: "Ben", ageYears: 8, settings: settings, now: 1000)
        let id = try store.startSession(childID: ema.id, game: .clouds, now: 2000)
        let otherID = try store.startSession(childID: other.id, game: .dog, now: 2100)
        let first: [VoiceGameEvent] = [.init(time: 0, kind: .started), .init(time: 0.4, kind: .tooShort, value: 0.08)]
        let second: [VoiceGameEvent] = [.init(time: 2.5, kind: .cloudLifted, value: 0.9), .init(time: 3.1, kind: .tooLoud, value: -12.25)]
        try store.appendEvents(sessionID: id, first)
        try store.appendEvents(sessionID: otherID, [.init(time: 0, kind: .started)])
        try store.appendEvents(sessionID: id, second)
        var summary = VoiceSessionSummary()
        summary.voicedSeconds = 12
        summary.secondsInTarget = 9.5
        summary.attempts = 7
        summary.successes = 5
        summary.f0LowHz = 210
        summary.f0HighHz = 290
        try store.endSession(id: id, outcome: .finished, summary: summary, now: 2090)
        #expect(try store.events(sessionID: id) == first + second)
        let session = try store.session(id: id)
        #expect(
            session
                == VoiceSessionRecord(
                    id: id, childID: ema.id, game: .clouds, started: 2000, ended: 2090, outcome: .finished, open: false, settings: settings,
                    summary: summary))
        #expect(try store.sessions(childID: ema.id) == [session])
        #expect(try store.sessions().map(\.id) == [id, otherID])
        #expect(try store.events(childID: ema.id).map(\.event) == first + second)
        #expect(try store.events().count == 5)
        // The therapist's screen: one week of figures, the CSV files in one read.
        let progress = try store.progress(childID: ema.id)
        #expect(progress.count == 1 && progress[0].overall.attemptsPerSuccess == 1.4 && progress[0].overall.minutesPlayed == 1.5)
        let csv = try store.csv(childID: ema.id)
        #expect(csv.events.split(separator: "\r\n").count == 5 && csv.sessions.split(separator: "\r\n").count == 2)
        #expect(csv.events.contains("\r\nEma,\(ema.id),\(id),clouds,1970-01-01T00:33:23Z,3.1,too-loud,-12.25\r\n"))
        #expect(try store.csv().events.split(separator: "\r\n").count == 6)
        // An ended session takes no more events and no second end.
        #expect { try store.appendEvents(sessionID: id, first) } throws: { "\($0)" == "voice session \(id) has already ended" }
        #expect { try store.endSession(id: id, outcome: .exited, summary: summary) } throws: {
            "\($0)" == "voice session \(id) has already ended"
        }
        // The settings used stay with the session when the child's change.
        var changed = ema
        changed.settings.targetHighDB = 80
        try store.updateChild(changed)
        #expect(try store.session(id: id).settings == settings)
    }

    /// The browser went away mid-game: no end is stored. The session reads as interrupted, ends
    /// at its last event, and a new store (after a restart) reads it the same.
    @Test func anUnendedSessionReadsAsInterrupted() throws {
        let store = try VoiceStore(path: path)
        let ema = try store.addChild(nickname: "Ema", ageYears: 6, settings: settings, now: 1000)
        let id = try store.startSession(childID: ema.id, game: .airplane, now: 5000)
        #expect(try store.session(id: id).outcome == .interrupted && store.session(id: id).seconds == 0)
        try store.appendEvents(sessionID: id, [.init(time: 0, kind: .started), .init(time: 42.5, kind: .planeTookOff)])
        let reopened = try VoiceStore(path: path).session(id: id)
        #expect(reopened.outcome == .interrupted && reopened.open && reopened.ended == 5042.5 && reopened.summary == nil)
        let csv = VoiceCSV.sessions(children: [ema], sessions: [reopened])
        #expect(csv.contains(",airplane,1970-01-01T01:23:20Z,1970-01-01T01:24:02Z,0.708,interrupted,"))
    }

    /// Events come a few times a second in small batches; each batch is one transaction.
    @Test func appendingBatchesIsCheap() throws {
        let store = try VoiceStore(path: path)
        let ema = try store.addChild(nickname: "Ema", ageYears: 6, settings: settings)
        let id = try store.startSession(childID: ema.id, game: .balloon)
        let batches = 200
        let start = ContinuousClock.now
        for batch in 0..<batches {
            try store.appendEvents(
                sessionID: id,
                (0..<3).map { VoiceGameEvent(time: Double(batch) * 0.25 + Double($0) * 0.01, kind: .pitchInBand, value: 250) })
        }
        let each = (ContinuousClock.now - start) / batches
        print("VoiceStore: \(batches) batches of 3 events, \(each) per batch")
        #expect(try store.events(sessionID: id).count == 3 * batches)
        #expect(each < .milliseconds(50), "a batch must fit well inside the 250 ms between batches")
    }

    @Test func damageAndTheOtherStores() throws {
        let tests = try HearingTestStore(path: path)
        try tests.save(HearingTestRecords.reliable())
        let store = try VoiceStore(path: path)
        let ema = try store.addChild(nickname: "Ema", ageYears: 6, settings: settings)
        let history = try PrescriptionStore(path: path)
        #expect(try history.integrityCheck() == "ok" && tests.all().count == 1 && VoiceStore(path: path).children() == [ema])
        #expect(try PrescriptionStore.openRecovering(path: path).recovery == nil)
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "UPDATE voice_children SET settings = replace(settings, '\"clouds\":5', '\"clouds\":6')") }
        #expect { try store.children() } throws: { "\($0)".contains("settings are damaged") }
    }
}
