import RibbitControl

/// Tells systemd how the daemon is (sd_notify): READY=1 once JACK answered (or after
/// `readyDeadline` without an answer: ready means the socket answers), STATUS= lines, the
/// watchdog, STOPPING=1.
final class SystemdService: DaemonService {
    let name = "systemd notification"
    private let notifier = SystemdNotifier()
    private var readySent = false
    private var lastWatchdog = 0.0
    private let started: Double
    /// The current one-line status, asked for when it is sent.
    private let statusLine: () -> String

    /// systemd hears READY=1 once JACK answered, or after this long without an answer.
    static let readyDeadline = 2.0

    init(started: Double, statusLine: @escaping () -> String) {
        self.started = started
        self.statusLine = statusLine
    }

    func tick(now: Double) {
        if let watchdog = notifier.watchdogInterval, now - lastWatchdog >= watchdog {
            notifier.send("WATCHDOG=1")
            lastWatchdog = now
        }
        if !readySent, now - started >= Self.readyDeadline { ready() }
    }

    /// READY=1 with the status (again after every new JACK session).
    func ready() {
        notifier.send("READY=1\nSTATUS=\(statusLine())")
        readySent = true
    }

    /// After JACK answered, with or without a session.
    func jackAnswered(connected: Bool) {
        if connected || !readySent { ready() } else { statusChanged() }
    }

    func statusChanged() { notifier.send("STATUS=\(statusLine())") }

    func stop(deadline: Double) {}

    func stopping() { notifier.send("STOPPING=1") }
}
