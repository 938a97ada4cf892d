import Glibc
import RibbitAudioLink
import RibbitControl
import RibbitSettings

/// The `ribbit-audio` child process and its end of the link: started with posix_spawn, the
/// link on its descriptor 3, stopped through the link and killed when it does not go.
final class AudioProcess {
    let pid: pid_t
    let link: AudioLinkSocket
    private(set) var exited = false

    /// Where `ribbit-audio` is: $RIBBIT_AUDIO, else beside this executable, else
    /// ../libexec/ribbit/ beside its directory (the Debian layout); nil when none can run.
    static func executablePath(environment: [String: String]) -> String? {
        RibbitPaths.companionExecutable("ribbit-audio", override: environment["RIBBIT_AUDIO"])
    }

    /// Starts it; the error says what to do.
    init(executable: String, arguments: [String]) throws(DaemonError) {
        guard let (ours, theirs) = AudioLinkSocket.pair() else {
            throw DaemonError("cannot make the link to the audio process: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, theirs, 3)  // dup2 clears close-on-exec
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, environ)
        Glibc.close(theirs)
        guard result == 0 else {
            Glibc.close(ours)
            throw DaemonError("cannot start the audio process \(executable): \(String(cString: strerror(result))); reinstall ribbit")
        }
        pid = child
        link = AudioLinkSocket(fd: ours)
    }

    /// Whether it has exited (reaps it).
    func hasExited() -> Bool {
        if !exited {
            var status: Int32 = 0
            exited = waitpid(pid, &status, WNOHANG) == pid
        }
        return exited
    }

    /// Asks it to stop, waits until `deadline` (monotonic seconds), then kills it. Returns
    /// whether it ended by itself (false: killed, its JACK client left unclosed).
    @discardableResult
    func stop(deadline: Double) -> Bool {
        link.send(.stop)
        while !hasExited(), MonotonicClock.seconds() < deadline {
            link.flush()
            usleep(5000)
        }
        let endedByItself = hasExited()
        kill()
        return endedByItself
    }

    /// Kills it at once (a stuck libjack call) and reaps it.
    func kill() {
        guard !hasExited() else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exited = true
    }
}
