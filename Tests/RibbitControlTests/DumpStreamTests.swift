import Foundation
import Glibc
import RibbitControl
import RibbitDSP
import RibbitMonitor
import RibbitSignals
import RibbitTestSupport
import Testing

/// The dump stream's socket side without JACK: a real ControlServer on a Unix socket in a
/// private directory, driven as the daemon's poll loop drives it.
@Suite struct DumpStreamTests {
    func frame(time: Double) -> DumpFrame {
        let x = Signals.sine(count: 4096, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.1)
        let dump = DumpAnalyzer().analyze(input: x, output: x, recentInput: x[...], recentOutput: x[...], sampleRate: 48000)
        let gains = EarGains(curve: .unity, filters: .delay(96, channelCount: 1, fftLength: 256), channel: 0, sampleRate: 48000)
        let ear = DumpFrame.Ear(dump: dump, gains: gains, thresholds: [1000: 30, 500: 20])
        return DumpFrame(
            time: time, sampleRate: 48000, latencyFrames: 96, xruns: 0, output: .processing, prescription: nil, limitedSamples: 0,
            droppedFrames: 0, ears: ["left": ear, "right": ear])
    }

    /// Runs the server's side of the poll loop, as the daemon does, until `subscribers` clients
    /// have asked for the dump (at most a second); returns the clock it reached.
    func serve(_ server: ControlServer, until subscribers: Int) -> Double {
        var now = 0.0
        while server.subscriberCount < subscribers && now < 1 {
            var fds = server.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 10)
            for entry in fds where entry.revents != 0 { server.handleReadable(entry.fd, now: now) { _, _ in ControlReply(ok: true) } }
            now += 0.01
        }
        #expect(server.subscriberCount == subscribers)
        return now
    }

    /// What the daemon encodes is what a client decodes, audiogram sorted by frequency.
    @Test func aFrameSurvivesTheWire() throws {
        let original = frame(time: 1.25)
        let line = ControlProtocol.encode(original)
        #expect(line.last == 0x0A && !line.dropLast().contains(0x0A), "one line")
        let decoded = try JSONDecoder().decode(DumpFrame.self, from: line)
        #expect(decoded == original)
        #expect(decoded.ears["left"]?.audiogram.map(\.frequencyHz) == [500, 1000])
    }

    /// The direct writer makes the very bytes JSONEncoder makes, for frames with and without a
    /// prescription, with nulls, negative levels, odd times, a name that needs escaping, the
    /// patient and date, and a no response in the audiogram.
    @Test func theDirectWriterMatchesJSONEncoder() throws {
        var full = frame(time: 1.2345678)
        full.prescription = .init(
            id: 7, name: "Dr. \"Quote\" \\ tab\t/slash", environment: "noisy", audiologist: "A. B.", rule: .nalR,
            signature: "signed by A (trusted)", patient: "P. Q., 70", date: "2026-11-02")
        full.ears["left"]!.audiogram.append(.init(frequencyHz: 8000, thresholdDBHL: 90, noResponse: true))
        #expect(String(decoding: full.jsonLine(), as: UTF8.self).contains(#"{"frequencyHz":8000,"noResponse":true,"thresholdDBHL":90}"#))
        full.ears["left"]!.combinationWindowDB[300] = nil
        full.ears["left"]!.inputRMSDB = -0.05
        full.xruns = 3
        full.limitedSamples = 12345
        for original in [frame(time: 0.05), frame(time: 1e-5), full] {
            let direct = original.jsonLine()
            let a = Array(direct), b = Array(ControlProtocol.encode(original))
            let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            if a != b {
                let around = { (x: [UInt8]) in String(decoding: x[max(0, at - 40)..<min(x.count, at + 40)], as: UTF8.self) }
                Issue.record("the writers differ at byte \(at): \(around(a)) | JSONEncoder: \(around(b))")
            }
            #expect(try JSONDecoder().decode(DumpFrame.self, from: direct) == original)
        }
    }

    /// A subscriber that does not read for a while is never sent half a line: lines of 5 MiB
    /// (more than any socket buffer takes at once, so they go out in pieces) arrive whole,
    /// newer ones are missed while an older one is still going out, and the server never waits.
    @Test func aSlowSubscriberGetsWholeLinesOnly() throws {
        let directory = try TestPaths.temporaryDirectory()
        let path = directory.appendingPathComponent("run/ribbitd.sock").path
        let server = try ControlServer(path: path)
        let client = try UnixSocket.connect(to: path)
        defer { close(client) }
        #expect(UnixSocket.writeAll(client, ControlProtocol.encode(ControlRequest.dump)))
        let now = serve(server, until: 1)
        // A line several times the socket's buffer (about 200 kB), so one is always part-sent.
        let padding = String(repeating: "x", count: 1 << 20)
        var offered = 0
        func offer() {
            let started = Date()
            server.broadcast(Data("{\"seq\":\(offered),\"pad\":\"\(padding)\"}\n".utf8), now: now)
            // A blocking write would never return (the reader is this thread); the bound is for a busy machine.
            #expect(Date().timeIntervalSince(started) < 5, "broadcast waited")
            offered += 1
        }
        for _ in 0..<5 { offer() }
        let reader = LineReader(fd: client)
        guard case .line(let reply) = reader.next(timeoutSeconds: 1) else { Issue.record("no reply"); return }
        #expect(try JSONDecoder().decode(ControlReply.self, from: reply).ok)
        struct Line: Decodable { var seq: Int; var pad: String }
        var received = [Int]()
        while offered < 300 && received.count < 4 {
            switch reader.next(timeoutSeconds: 0.02) {
            case .line(let data):
                let line = try? JSONDecoder().decode(Line.self, from: data)
                #expect(line?.pad.count == padding.count, "a cut or spliced line of \(data.count) bytes")
                received.append(line?.seq ?? -1)
            case .timedOut, .closed:
                offer()  // also sends the rest of the line under way
            }
        }
        #expect(received.count >= 2 && received.first == 0, "\(received)")
        #expect(received.last! < offered - 1 && Set(received).count == received.count, "\(received) of \(offered)")
        #expect(server.subscriberCount == 1, "a slow reader is not dropped while it makes progress")
    }

    /// A subscriber that takes nothing for 10 s is dropped; one that has gone is dropped at once.
    @Test func stalledOrGoneSubscribersAreDropped() throws {
        let directory = try TestPaths.temporaryDirectory()
        let path = directory.appendingPathComponent("run/ribbitd.sock").path
        let server = try ControlServer(path: path)
        var notices = [String]()
        server.onNotice = { notices.append($0) }
        let stalled = try UnixSocket.connect(to: path)
        let gone = try UnixSocket.connect(to: path)
        defer { close(stalled) }
        for fd in [stalled, gone] { #expect(UnixSocket.writeAll(fd, ControlProtocol.encode(ControlRequest.dump))) }
        let now = serve(server, until: 2)
        close(gone)
        let line = ControlProtocol.encode(frame(time: 0))
        server.broadcast(line, now: now)
        server.broadcast(line, now: now + 0.05)
        #expect(server.subscriberCount == 1, "the closed client is still counted")
        for _ in 0..<400 { server.broadcast(line, now: now) }  // fills the stalled client's socket
        var t = now
        while server.subscriberCount > 0 && t < now + 20 {
            t += 0.5
            server.broadcast(line, now: t)
        }
        #expect(server.subscriberCount == 0)
        #expect(t > now + 10 && t <= now + 11, "dropped after \(t - now) s")
        #expect(notices.contains { $0.contains("took nothing for 10 s") })
    }
}
