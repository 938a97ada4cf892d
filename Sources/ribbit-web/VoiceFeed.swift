import Foundation
import RibbitControl
import RibbitVoice

/// The daemon's voice stream, shared by every open game socket (SharedDaemonStream), so the
/// daemon analyses the microphone only while a game runs.
enum VoiceFeed {
    enum Message: Sendable {
        case frame(VoiceFrame)
        /// One line for the screen: no daemon, no JACK, a refusal.
        case problem(String)
    }

    /// A game needs every frame (its timings count them), so a socket may fall 2 s behind
    /// before the oldest are dropped.
    static let socketBuffer = 200

    static func make(socketPath: String) -> SharedDaemonStream<Message> {
        let decoder = JSONDecoder()
        return SharedDaemonStream(
            socketPath: socketPath, command: .voice, name: "voice stream", socketBuffer: socketBuffer,
            decode: { line in (try? decoder.decode(VoiceFrame.self, from: line)).map { .frame($0) } }, problem: { .problem($0) })
    }
}
