import Foundation
import Glibc
import RibbitTestSupport
import Testing

/// The time from a click in the web app to the changed sound at ribbit's output ports: the
/// request sent as the page's script sends it, through ribbit-web, the control socket, the daemon
/// and the audio process, found in a recording of the output made at the same time.
extension WebDaemonTests {
    @Test(.runningLimit(minutes: 5)) func webAppClickReachesTheSoundWithinAFewPeriods() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let web = try WebAppUnderTest(daemon: daemon)
        #expect(try web.logIn().status == 200)

        // A steady 1 kHz tone: 48-frame blocks hold exactly one period, so a block's level is exact.
        // Long enough for three clicks 3 s apart and the last one's 12 s, however slow a loaded
        // machine is.
        let probe = try Probe(server: server, signal: "sine:1000", levelDBFS: -30, seconds: 30)
        try probe.waitUntilPlaying()
        // Each click with the longest it may take to reach the sound (ms): pause and resume switch
        // a flag; the volume step waits for a refit of every filter and compressor table (issue 29
        // makes it a trim), which took over 3 s beside stress-ng (p1 of 8268ba9; 18-64 ms quiet).
        let clicks: [(label: String, path: String, json: String, allowedMs: Double)] = [
            ("pause", "/api/pause", "{}", 2500), ("resume", "/api/resume", "{}", 2500),
            ("volume -6 dB", "/api/volume", #"{"stepDB":-6}"#, 11_000),
        ]
        var sent: [Int] = []
        for click in clicks {
            usleep(3_000_000)
            sent.append(Int(MonotonicSeconds.now() * 1e9))  // the probe's clock, CLOCK_MONOTONIC
            let answer = try web.request("POST", click.path, json: click.json)
            #expect(answer.status == 200, "\(click.label): \(String(decoding: answer.body, as: UTF8.self))")
        }
        let recording = try probe.finish()
        // What the daemon says it plays, for a failure's message (a change that never came, or came late).
        let status = String(decoding: try web.request("GET", "/api/status").body, as: UTF8.self)
        #expect(recording.startNanoseconds > 0, "the probe did not say when it started")

        let block = 48
        let levels = stride(from: 0, to: recording.recorded[0].count - block, by: block).map { start in
            let slice = recording.recorded[0][start..<start + block]
            return 10 * log10(max(slice.reduce(0) { $0 + Double($1 * $1) } / Double(block), 1e-12))
        }
        #expect(!recording.callbacks.isEmpty, "the probe wrote no callback times")
        func blockAt(_ nanoseconds: Int) -> Int { recording.frame(atNanoseconds: nanoseconds) / block }
        var report: [String] = []
        for (index, (click, at)) in zip(clicks, sent).enumerated() {
            let clicked = blockAt(at)
            // Up to the next click (3 s later), or 12 s for the last (the volume step's allowance
            // and a second).
            let end = index + 1 < sent.count ? blockAt(sent[index + 1]) : clicked + 12000
            guard clicked > 500, end <= levels.count, end - clicked > 1500 else {
                Issue.record("\(click.label) fell outside the recording (blocks \(clicked) to \(end) of \(levels.count))")
                continue
            }
            // The level before (the half second up to the click) and after (the half second
            // before the next click); the change is where the level first crosses halfway
            // between them, in dB.
            let before = Self.median(levels[clicked - 500..<clicked])
            let after = Self.median(levels[end - 500..<end])
            #expect(abs(before - after) > 5, "\(click.label): \(before) dB -> \(after) dB, no change; the daemon's status: \(status)")
            let halfway = (before + after) / 2
            // Crossed and held for 20 blocks (20 ms, 15 periods): a period an xrun left silent
            // or repeated in the recording crosses for a block or two, never for 20.
            func crossed(_ index: Int) -> Bool { after < before ? levels[index] < halfway : levels[index] > halfway }
            let changed = try #require(
                (clicked - 100..<end - 500).first { index in (index..<index + 20).allSatisfy(crossed) },
                "\(click.label): no change before the next click")
            // The period that recorded the changed block, on the clock the request was sent by.
            let milliseconds = Double(recording.nanoseconds(atFrame: changed * block) - at) / 1e6
            // Before the click would mean the clocks disagree: the measurement, not ribbit, is wrong.
            #expect(milliseconds > -1 && milliseconds < click.allowedMs, "\(click.label): \(milliseconds) ms")
            report.append(String(format: "%@ %.1f ms", click.label, milliseconds))
        }
        print(
            "ribbit-web click to output: \(report.joined(separator: ", ")) (to the period that recorded it; period 64 frames, 1.3 ms; xruns \(recording.xruns))"
        )
    }

    static func median(_ values: ArraySlice<Double>) -> Double { values.sorted()[values.count / 2] }
}
