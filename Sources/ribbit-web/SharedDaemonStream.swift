import CMalloc
import Foundation
import RibbitControl
import Synchronization

/// One of the daemon's streams (`dump` for the Live screen, `voice` for the games) shared by
/// every socket that watches it: one connection to the daemon however many tabs or games are
/// open, opened when the first socket subscribes and closed when the last one leaves, so the
/// daemon stops analysing as soon as nobody looks. Each line becomes a message for the sockets
/// (`decode`; nil: a line this build cannot read); what goes wrong becomes a `problem` message.
final class SharedDaemonStream<Message: Sendable>: Sendable {
    let socketPath: String
    private let command: ControlRequest
    /// For the problem lines: "live view", "voice stream".
    private let name: String
    /// Messages a slow socket may fall behind before the oldest are dropped.
    private let socketBuffer: Int
    private let decode: @Sendable (Data) -> Message?
    private let problem: @Sendable (String) -> Message

    private struct State {
        var subscribers: [Int: AsyncStream<Message>.Continuation] = [:]
        var nextID = 0
        var running = false
    }
    private let state = Mutex(State())

    init(
        socketPath: String, command: ControlRequest, name: String, socketBuffer: Int,
        decode: @escaping @Sendable (Data) -> Message?,
        problem: @escaping @Sendable (String) -> Message
    ) {
        self.socketPath = socketPath
        self.command = command
        self.name = name
        self.socketBuffer = socketBuffer
        self.decode = decode
        self.problem = problem
    }

    /// A socket's messages; `unsubscribe` with the id ends them.
    func subscribe() -> (id: Int, messages: AsyncStream<Message>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingNewest(socketBuffer))
        let (id, start) = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            defer { state.running = true }
            return (state.nextID, !state.running)
        }
        if start {
            // The daemon's socket blocks, so it is read on a thread of its own, never the server's.
            let thread = Thread { [self] in run() }
            thread.name = "ribbit-web.\(command.command.rawValue)"
            thread.start()
        }
        return (id, stream)
    }

    func unsubscribe(_ id: Int) {
        state.withLock { $0.subscribers.removeValue(forKey: id) }?.finish()
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    private func send(_ message: Message) {
        for continuation in state.withLock({ Array($0.subscribers.values) }) { continuation.yield(message) }
    }

    /// Until the last subscriber leaves: (re)connects, reads lines and forwards them.
    private func run() {
        var stream: StreamConnection?
        var lastFrame = MonotonicClock.seconds()
        while true {
            let stop = state.withLock { state in
                if state.subscribers.isEmpty { state.running = false }
                return !state.running
            }
            if stop {
                // `stream` closes here, and the daemon stops analysing. What the sockets' frames
                // took goes back to the system: the allocator keeps freed pages otherwise, and
                // the web app would stay at its streaming size for good.
                stream = nil
                malloc_trim(0)
                return
            }
            guard let open = stream else {
                do {
                    stream = try DaemonConnection(socketPath: socketPath).stream(command)
                    lastFrame = MonotonicClock.seconds()
                } catch {
                    switch error {
                    case .unreachable(let error): send(problem(error.description))
                    case .refused(let message): send(problem("the daemon refused the \(name): \(message)"))
                    }
                    Thread.sleep(forTimeInterval: 1)
                }
                continue
            }
            switch open.next(timeoutSeconds: 0.25) {
            case .line(let line):
                lastFrame = MonotonicClock.seconds()
                if let message = decode(line) {
                    send(message)
                } else {
                    stream = nil
                    send(problem("the daemon sent a line of the \(name) this web app cannot read; is it the same version as ribbitd?"))
                    Thread.sleep(forTimeInterval: 1)
                }
            case .timedOut:
                if MonotonicClock.seconds() - lastFrame > 1 {
                    send(problem("no sound arrives: the daemon has no JACK connection (is JACK running? `ribbitd status`)"))
                    lastFrame = MonotonicClock.seconds()
                }
            case .closed:
                stream = nil
                send(problem("the daemon ended the \(name) (it stopped or restarted); reconnecting"))
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }
}
