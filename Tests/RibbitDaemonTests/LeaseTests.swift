import Foundation
import Glibc
import RibbitControl
import RibbitSettings
import RibbitTestSupport
import Testing

/// What a client starts lasts only while its connection does: a voice game's pause, a hearing
/// test, a live measurement. When the owner goes (closed, killed), the daemon puts the aid back
/// within a second. Plus what the review found around them: a pause storm, an unbounded test
/// plan, the voice stream across a JACK restart.
extension DaemonTests {
    /// The socket of `daemon`, for clients the test drives itself.
    private func socket(_ daemon: DaemonUnderTest) -> String { RibbitPaths(environment: daemon.environment).socketPath }

    @Test func aLeasedPauseEndsWithItsConnectionButTheWearersDoesNot() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("ski-slope.rx").path])
        try daemon.waitUntilProcessing()
        let request = ControlRequest.pause(lease: true)

        // The game's connection goes: the aid plays again within a second.
        let game = try DaemonConnection(socketPath: socket(daemon)).hold(request)
        #expect(try daemon.status().output == .paused)
        usleep(300_000)
        #expect(try daemon.status().output == .paused, "a held pause must last while its connection stays open")
        game.close()
        let back = try daemon.wait(until: { $0.output == .processing }, within: 1)
        #expect(back, "the pause outlived the connection that held it")

        // Two holders: the aid comes back when the last one goes.
        let first = try DaemonConnection(socketPath: socket(daemon)).hold(request)
        let second = try DaemonConnection(socketPath: socket(daemon)).hold(request)
        first.close()
        usleep(300_000)
        #expect(try daemon.status().output == .paused)
        second.close()
        #expect(try daemon.wait(until: { $0.output == .processing }, within: 1))

        // The wearer pauses during a game: the pause is theirs, the game's end leaves it.
        let held = try DaemonConnection(socketPath: socket(daemon)).hold(request)
        #expect(try daemon.ribbitd(["pause"]).status == 0)
        held.close()
        usleep(500_000)
        #expect(try daemon.status().output == .paused, "the wearer's own pause was lifted by a game's end")
        // And a game that starts while the wearer has paused never resumes for them.
        let late = try DaemonConnection(socketPath: socket(daemon)).hold(request)
        late.close()
        usleep(500_000)
        #expect(try daemon.status().output == .paused)
        #expect(try daemon.ribbitd(["resume"]).status == 0)
        #expect(daemon.log.contains("the client that held the pause went away: resumed"))
        try daemon.stop()
    }

    /// A hearing test runs while the connection that started it stays open: a page closed or a
    /// killed command stops it within a second and the hearing aid plays again.
    @Test func aHearingTestEndsWhenItsOwnerGoes() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("ski-slope.rx").path])
        try daemon.waitUntilProcessing()
        let start = ControlRequest.hearingTestStart(try HearingTestRequest(frequenciesHz: [1000, 2000], seed: 7))
        let owner = try DaemonConnection(socketPath: socket(daemon)).hold(start)
        #expect(try daemon.status().hearingTest?.state == .running)
        usleep(1_500_000)
        #expect(try daemon.status().hearingTest?.state == .running, "the test must run while its owner is there")
        owner.close()
        let ended = try daemon.wait(until: { $0.hearingTest?.state == .stopped }, within: 1)
        #expect(ended, "the hearing test outlived its owner")
        #expect(try daemon.status().tone == nil)

        // `ribbitd hearing-test` killed: its connection closes with it.
        let command = ChildProcess()
        command.executableURL = DaemonUnderTest.binary
        command.arguments = ["hearing-test", "--frequencies", "1000,2000", "--seed", "3"]
        command.environment = daemon.environment
        let input = Pipe()
        command.standardInput = input
        command.standardOutput = Pipe()
        command.standardError = Pipe()
        try command.run()
        input.fileHandleForWriting.write(Data("\n".utf8))  // past the instructions
        #expect(try daemon.wait(until: { $0.hearingTest?.state == .running }, within: 30))
        kill(command.processIdentifier, SIGKILL)
        command.waitUntilExit()
        #expect(try daemon.wait(until: { $0.hearingTest?.state == .stopped }, within: 1))

        // A plan a test could never finish cannot be made, and the daemon refuses it sent raw.
        let endless = Array(repeating: 1000, count: 10_000)
        #expect(throws: RequestError.self) { try HearingTestRequest(frequenciesHz: endless) }
        let line = #"{"command":"hearing-test-start","frequenciesHz":["# + endless.map(String.init).joined(separator: ",") + "]}\n"
        let reply = try rawRequest(socket(daemon), Data(line.utf8))
        #expect(reply?.ok == false && reply?.error?.contains("at most") == true, "\(String(describing: reply))")
        #expect(try daemon.status().hearingTest?.state == .stopped)
        try daemon.stop()
    }

    /// `verify --live` killed with SIGKILL in the middle of a measurement: within a second the
    /// daemon has the wearer's program and volume back and its ports wired as before.
    @Test func aKilledLiveMeasurementIsPutBackByTheDaemon() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server, arguments: ["--rx", TestPaths.prescription("camfit-sloping.rx").path])
        try daemon.waitUntilProcessing()
        #expect(try daemon.ribbitd(["volume", "+4"]).status == 0)
        #expect(try daemon.ribbitd(["program", "music"]).status == 0)
        let lsp = try #require(Built.tool("jack_lsp"))
        func wiring() throws -> String { try Built.run(lsp, ["-c"], environment: server.environment).stdout }
        let before = try wiring()
        #expect(
            before.contains("system:capture_1\n   ribbit:in_left") || before.contains("ribbit:in_left\n   system:capture_1"), "\(before)")

        let verify = ChildProcess()
        verify.executableURL = DaemonUnderTest.binary
        verify.arguments = ["verify", "--live", "--program", "quiet"]
        verify.environment = daemon.environment
        verify.standardOutput = Pipe()
        verify.standardError = Pipe()
        try verify.run()
        // The measurement holds the ports once the daemon's inputs are fed by ribbit-verify.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !(try wiring()).contains("ribbit-verify") { usleep(20_000) }
        #expect(try wiring().contains("ribbit-verify"), "verify --live never took the ports")
        // Well into a measurement: its own program in force.
        #expect(
            try daemon.wait(until: { $0.listening?.program == .quiet }, within: 30), "the measurement never set its program")
        kill(verify.processIdentifier, SIGKILL)
        verify.waitUntilExit()
        let killed = Date()
        let restored = try daemon.wait(
            until: { $0.listening?.volumeDB == 4 && $0.listening?.program == .music && $0.listening?.chosenBy == .wearer }, within: 1)
        let listening = try daemon.status().listening
        #expect(restored, "program and volume not put back: \(String(describing: listening))")
        // Each look is a jack_lsp process, so the wiring is judged on what it became, with only a
        // loose bound on when (a process start can take a second on a loaded machine).
        var after = try wiring()
        while Date().timeIntervalSince(killed) < 30, after != before {
            usleep(20_000)
            after = try wiring()
        }
        #expect(after == before, "the ports were not wired back:\n\(after)\nwas\n\(before)")
        #expect(Date().timeIntervalSince(killed) < 5, "wired back only after \(Date().timeIntervalSince(killed)) s")
        #expect(daemon.log.contains("live measurement ended"))
        try daemon.stop()
    }

    /// 100 pause and resume requests as fast as they come, the last a pause: once its reply
    /// arrives, the output is silent. Read from the output, frame by frame, whatever the load:
    /// samples near a JACK xrun (a cycle a busy machine missed, whose buffers JACK may hand on
    /// unprocessed) are not judged, and a storm recorded with too few undisturbed seconds after
    /// it is played again (3 times at most, the xruns reported).
    @Test func aPauseStormEndsInSilenceWhenTheLastReplyComes() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("ski-slope.rx").path])
        try daemon.waitUntilProcessing()
        let margin = 4 * server.period
        for attempt in 1...3 {
            #expect(try daemon.ribbitd(["resume"]).status == 0)
            // Long enough to leave over a second after the storm however slow a loaded machine is.
            let probe = try Probe(server: server, signal: "noise", levelDBFS: -30, seconds: 10)
            try probe.waitUntilPlaying()
            usleep(1_000_000)
            for index in 0..<100 {
                let reply = try ControlClient.send(index % 2 == 0 ? .resume : .pause(lease: false), socketPath: socket(daemon))
                #expect(reply.ok)
            }
            let answered = Int(MonotonicClock.seconds() * 1e9)
            #expect(try daemon.status().output == .paused)
            let recording = try probe.finish(besides: daemon)
            // From the second period the probe recorded after the reply came (JACK may hand it
            // ribbit's output of the cycle before, the one in which the ramp reached silence).
            let from = recording.frame(atNanoseconds: answered) + server.period
            let judged = (min(from, recording.recorded[0].count)..<recording.recorded[0].count).filter {
                !recording.isDisturbed($0, margin: margin)
            }
            if judged.count < 48000 && attempt < 3 {
                print("pause storm: \(recording.xruns) xruns left \(judged.count) undisturbed frames after the reply; again")
                continue
            }
            let loudest = judged.map { max(abs(recording.recorded[0][$0]), abs(recording.recorded[1][$0])) }.max() ?? 1
            #expect(judged.count >= 48000, "too little undisturbed output after the last reply (\(judged.count) frames)")
            #expect(loudest == 0, "the output played \(loudest) after the reply to the last pause (\(recording.xruns) xruns)")
            break
        }
        try daemon.stop()
    }

    /// A voice client listening across a JACK restart keeps getting frames from the new session.
    @Test func theVoiceStreamComesBackAfterAJackRestart() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        let voice = try VoiceStream.open(socketPath: socket(daemon))
        // Counted, not timed: the defect was a stream that never came back.
        func frames(_ wanted: Int, within seconds: Double = 30) -> Int {
            var count = 0
            let end = Date().addingTimeInterval(seconds)
            while count < wanted && Date() < end { if case .frame = voice.next(timeoutSeconds: 0.2) { count += 1 } }
            return count
        }
        #expect(frames(50) == 50)
        for round in 1...3 {
            server.kill()
            try server.restart()
            try daemon.waitUntilProcessing()
            let count = frames(50)
            #expect(count == 50, "round \(round): \(count) voice frames in the 30 s after JACK came back")
        }
        try daemon.stop()
    }
}
