import Foundation
import Glibc
import RibbitAudioLink
import RibbitTestSupport
import Testing

extension DaemonTests {
    /// The JACK client lives in a child, `ribbit-audio`. When it dies (killed, crashed), the
    /// daemon keeps answering and starts a new one with the same prescription and mode; at stop
    /// no child is left behind.
    @Test func aKilledAudioProcessIsStartedAgainWithTheSameSound() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("mild-presbycusis.rx").path])
        _ = try daemon.waitUntilProcessing()
        #expect(try daemon.ribbitd(["bypass", "on"]).status == 0)
        let first = try #require(audioProcess(of: daemon.pid))
        #expect(processName(first) == "ribbit-audio")
        kill(first, SIGKILL)
        _ = try daemon.status()  // the socket answers while the audio process is gone
        _ = try daemon.waitUntilProcessing()
        let second = try #require(audioProcess(of: daemon.pid))
        #expect(second != first)
        let status = try daemon.status()
        #expect(status.output == .bypassed)
        #expect(status.prescription?.name == "Mild sloping high-frequency loss")
        #expect(status.ceilingDBFS != nil)
        #expect(daemon.log.contains("the audio process ended unexpectedly"))
        #expect(try daemon.stop() == 0)
        #expect(kill(second, 0) != 0, "the audio process outlived the daemon")
    }

    /// An upgrade can put a ribbit-audio of another link version beside a daemon that still
    /// runs: it refuses in one line that says to restart ribbitd, and the daemon reports that
    /// instead of decoding bytes it does not know.
    @Test func anAudioProcessOfAnotherLinkVersionSaysToRestart() throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        let older = directory.appendingPathComponent("older-ribbit-audio")
        let real = Built.product("ribbit-audio", configuration: "release").path
        // Drops the daemon's "--link-version N" and claims version 1, as a daemon before the numbering.
        try Data("#!/bin/sh\nshift 2\nexec '\(real)' --link-version 1 \"$@\"\n".utf8).write(to: older)
        #expect(chmod(older.path, 0o755) == 0)
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect"], directory: directory, extraEnvironment: ["RIBBIT_AUDIO": older.path])
        let refused = try daemon.wait(until: { $0.jackProblem?.contains("link version") == true })
        let problem = try daemon.status().jackProblem ?? ""
        #expect(refused, "status: \(problem)\n\(daemon.log)")
        #expect(
            problem.contains("ribbit-audio speaks link version \(AudioMessage.linkVersion) and this ribbitd version 1")
                && problem.contains("restart"), "\(problem)")
        #expect(try daemon.stop() == 0)
    }

    /// How an upgrade puts the new ribbitd in place under a running one.
    enum Upgrade: String, CaseIterable, Sendable {
        /// dpkg: the new file written beside, then renamed over the old one.
        case renamedOver = "renamed over"
        /// `install -b` and the like: the old file moved aside, the new one written in its place.
        case movedAside = "moved aside"
        /// Renamed over, the daemon having been started through a symbolic link to it.
        case startedThroughALink = "started through a link"
    }

    /// A package upgrade replaces the files under a running daemon, so the next audio process it
    /// starts would be the new version. Before it starts one, the daemon looks at the file it was
    /// started from: replaced, it ends with EX_TEMPFAIL (75) and says why, and systemd
    /// (Restart=on-failure) starts the new version. Until then it plays on.
    @Test(arguments: Upgrade.allCases)
    func aDaemonWhoseFileWasReplacedEndsSoTheNewVersionStarts(_ upgrade: Upgrade) throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        let installed = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: installed, withIntermediateDirectories: true)
        let ribbitd = installed.appendingPathComponent("ribbitd")
        let audio = installed.appendingPathComponent("ribbit-audio")
        try FileManager.default.copyItem(at: DaemonUnderTest.binary, to: ribbitd)
        try FileManager.default.copyItem(at: Built.product("ribbit-audio", configuration: "release"), to: audio)
        var started = ribbitd
        if upgrade == .startedThroughALink {
            started = directory.appendingPathComponent("ribbitd-link")
            try FileManager.default.createSymbolicLink(at: started, withDestinationURL: ribbitd)
        }
        let daemon = try DaemonUnderTest(
            server: server, directory: directory, extraEnvironment: ["RIBBIT_AUDIO": audio.path], executable: started)
        _ = try daemon.waitUntilProcessing()
        let new = installed.appendingPathComponent("ribbitd.dpkg-new")
        try FileManager.default.copyItem(at: DaemonUnderTest.binary, to: new)
        if upgrade == .movedAside { #expect(rename(ribbitd.path, installed.appendingPathComponent("ribbitd.old").path) == 0) }
        #expect(rename(new.path, ribbitd.path) == 0)
        // Nothing needs the new version yet: the sound goes on (JACK keeps calling it).
        _ = try daemon.waitUntilProcessing()
        #expect(daemon.isRunning)
        let first = try #require(audioProcess(of: daemon.pid))
        kill(first, SIGKILL)
        let status = daemon.waitForExit(within: 30)
        #expect(status == 75, "\(upgrade.rawValue): exit status \(status.map(String.init) ?? "none: still running")\n\(daemon.log)")
        #expect(daemon.log.contains("ribbitd was upgraded while it ran"), "\(daemon.log)")
    }

    /// An audio process held still for 100 ms (SIGSTOP, as a loaded machine may hold it) misses
    /// JACK cycles, whatever the xrun notices say: it finds them by JACK's frame time, `status`
    /// gives where, and the test harness marks the probe's recording there.
    @Test func cyclesTheAudioProcessMissedAreCountedWhereTheyHappened() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server)
        _ = try daemon.waitUntilProcessing()
        // (A loaded machine may already have held it back: the count is compared, not zero.)
        let before = try #require(try daemon.status().jack?.missedCycles)
        let audio = try #require(audioProcess(of: daemon.pid))
        let probe = try Probe(server: server, signal: "sine:250", levelDBFS: -30, seconds: 3)
        try probe.waitUntilPlaying()
        usleep(1_000_000)
        let stopped = Int(MonotonicSeconds.now() * 1e9)
        kill(audio, SIGSTOP)
        usleep(100_000)
        kill(audio, SIGCONT)
        let resumed = Int(MonotonicSeconds.now() * 1e9)
        let recording = try probe.finish(besides: daemon)
        let jack = try #require(try daemon.status().jack)
        // 100 ms is 75 periods of 64 frames; the process may have run a few of them before the
        // signal took hold, and JACK may have kept it waiting a little longer.
        #expect(jack.missedCycles - before >= 50, "\(jack.missedCycles - before) missed cycles")
        let marked = jack.missedAtFrameTimes.compactMap(recording.frame(atJackFrame:))
        let (from, to) = (recording.frame(atNanoseconds: stopped), recording.frame(atNanoseconds: resumed) + 8 * server.period)
        #expect(marked.contains { $0 >= from && $0 <= to }, "missed at probe frames \(marked), stopped over \(from)...\(to)")
        #expect(marked.allSatisfy { recording.disturbances.contains($0) })
        #expect(try daemon.stop() == 0)
    }

    /// The daemon's only child process, if any.
    private func audioProcess(of pid: Int32) -> pid_t? {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").compactMap { pid_t($0) }.first
    }

    private func processName(_ pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
