import Foundation
import RibbitControl
import RibbitVoice
import Synchronization

/// The daemon's voice stream, shared by every open game socket as LiveFeed shares the dump
/// stream: one connection however many games run, opened when the first game subscribes and
/// closed when the last one leaves, so the daemon analyses the microphone only while a game runs.
final class VoiceFeed: Sendable {
    enum Message: Sendable {
        case frame(VoiceFrame)
        /// One line for the screen: no daemon, no JACK, a refusal.
        case problem(String)
    }

    /// A game needs every frame (its timings count them), so a socket may fall 2 s behind
    /// before the oldest are dropped.
    static let socketBuffer = 200

    private struct State {
        var subscribers: [Int: AsyncStream<Message>.Continuation] = [:]
        var nextID = 0
        var running = false
    }

    let socketPath: String
    private let state = Mutex(State())

    init(socketPath: String) { self.socketPath = socketPath }

    func subscribe() -> (id: Int, messages: AsyncStream<Message>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingNewest(Self.socketBuffer))
        let (id, start) = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            defer { state.running = true }
            return (state.nextID, !state.running)
        }
        if start {
            // VoiceStream blocks, so it is read on a thread of its own, never the server's.
            let thread = Thread { [self] in run() }
            thread.name = "ribbit-web.voice"
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

    /// Until the last subscriber leaves: (re)connects, reads frames and forwards them.
    private func run() {
        var stream: VoiceStream?
        var lastFrame = MonotonicClock.seconds()
        while true {
            let stop = state.withLock { state in
                if state.subscribers.isEmpty { state.running = false }
                return !state.running
            }
            if stop { return }  // `stream` closes here, and the daemon stops analysing
            guard let open = stream else {
                do {
                    stream = try VoiceStream.open(socketPath: socketPath)
                    lastFrame = MonotonicClock.seconds()
                } catch {
                    switch error {
                    case .client(let error): send(.problem(error.description))
                    case .refused(let message): send(.problem("the daemon refused the voice stream: \(message)"))
                    }
                    Thread.sleep(forTimeInterval: 1)
                }
                continue
            }
            switch open.next(timeoutSeconds: 0.25) {
            case .frame(let frame):
                lastFrame = MonotonicClock.seconds()
                send(.frame(frame))
            case .timedOut:
                if MonotonicClock.seconds() - lastFrame > 1 {
                    send(.problem("no sound arrives: the daemon has no JACK connection (is JACK running? `ribbitd status`)"))
                    lastFrame = MonotonicClock.seconds()
                }
            case .closed:
                stream = nil
                send(.problem("the daemon ended the voice stream (it stopped or restarted); reconnecting"))
                Thread.sleep(forTimeInterval: 1)
            case .unreadable:
                stream = nil
                send(.problem("the daemon sent a voice frame this web app cannot read; is it the same version as ribbitd?"))
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }
}
