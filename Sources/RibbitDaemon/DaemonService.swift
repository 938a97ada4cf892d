/// One job of the daemon (the history, the control socket, the JACK session, the dump,
/// systemd), in the shape of swift-service-lifecycle's services: started in order, stopped
/// in reverse with a deadline. They all run on the control thread's poll loop, which owns
/// every piece of daemon state, so none needs a lock (docs/architecture.md says why the
/// package itself is not used).
protocol DaemonService: AnyObject {
    /// For the log: "history", "control socket" ...
    var name: String { get }
    /// Starts the job; an error stops the daemon before it serves anything.
    func start(now: Double) throws
    /// The job's share of every turn of the poll loop (every 10 to 100 ms).
    func tick(now: Double)
    /// Ends the job; `deadline` (monotonic seconds) is when the daemon leaves regardless.
    func stop(deadline: Double)
}

extension DaemonService {
    func start(now: Double) throws {}
    func tick(now: Double) {}
    func stop(deadline: Double) {}
}
