import Foundation
import Glibc
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

    /// The daemon's only child process, if any.
    private func audioProcess(of pid: Int32) -> pid_t? {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").compactMap { pid_t($0) }.first
    }

    private func processName(_ pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
