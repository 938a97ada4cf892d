import Foundation
import Hummingbird
import HummingbirdWebSocket
import RibbitControl
import RibbitStore
import RibbitVoice

/// A voice game, full screen: the SERVER runs the game (VoiceGames.make) on the daemon's voice
/// frames and stores the session and its events; the page (/voice-play.js) only draws the
/// views it is sent over /api/voice/play, on a canvas, in code (no image files), smoothing
/// between views at the display's rate. Closing the socket before the end stores "exited".
enum VoicePlay {
    static let path = "/voice/play"
    static let script = "/voice-play.js"
    static let socketPath = "/api/voice/play"
    /// Events are stored in batches of at most this many frames (0.25 s): one transaction each.
    static let batchFrames = 25

    static func addRoutes<Context: WebSocketRequestContext & RequestContext>(
        to router: Router<Context>, daemon: DaemonBridge, voice: VoiceBridge, feed: SharedDaemonStream<VoiceFeed.Message>
    ) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.ws(
            RouterPath(stringLiteral: socketPath),
            shouldUpgrade: { request, _ in try LiveScreen.checkUpgrade(request, socket: socketPath, view: "a voice game") },
            onUpgrade: { inbound, outbound, context in
                let query = context.request.uri.queryParameters
                let encoder = JSONEncoder()
                func say(_ message: Message) async throws {
                    try await outbound.write(.text(String(decoding: try encoder.encode(message), as: UTF8.self)))
                }
                guard let childID = query.get("child").flatMap({ Int64($0) }),
                    let kind = query.get("game").flatMap({ VoiceGameKind(rawValue: $0) })
                else {
                    try await say(Message(problem: "open a game as /voice/play?child=ID&game=clouds|airplane|dog|balloon|pitch"))
                    return
                }
                let started = await voice.run { store -> (VoiceChild, Int64) in
                    let child = try store.child(id: childID)
                    return (child, try store.startSession(childID: childID, game: kind, settings: child.settings))
                }
                guard case .success(let (child, sessionID)) = started else {
                    if case .failure(let failure) = started { try await say(Message(problem: failure.message)) }
                    return
                }
                // The pause is held by a connection of this game's (a lease): it ends with the game,
                // or with ribbit-web if that dies first; a pause the wearer made stays theirs.
                var pause: DaemonLease?
                if query.get("pause") == "1" {
                    pause = await daemon.hold(.pause(lease: true)).lease
                }
                try? await say(Message(nickname: child.nickname, settings: child.settings))

                let (subscription, messages) = feed.subscribe()
                let outcome = await withTaskGroup(of: Played?.self) { group in
                    group.addTask {
                        do { for try await _ in inbound {} } catch {}
                        return nil  // the browser left (Exit, a closed tab)
                    }
                    group.addTask {
                        await play(VoiceGames.make(kind, settings: child.settings), messages: messages, sessionID: sessionID, voice: voice)
                        {
                            try await say($0)
                        }
                    }
                    var played: Played?
                    while let result = await group.next() {
                        if let result { played = result }
                        group.cancelAll()  // either end stops the other; the game's task still returns its state
                    }
                    return played
                }
                feed.unsubscribe(subscription)
                if var played = outcome {
                    let finished = played.game.isFinished
                    if !finished { played.pending += played.game.exit(time: played.lastTime) }
                    let (events, summary) = (played.pending, played.game.summary)
                    _ = await voice.run { store in
                        try store.appendEvents(sessionID: sessionID, events)
                        try store.endSession(id: sessionID, outcome: finished ? .finished : .exited, summary: summary)
                    }
                }
                pause?.close()
            })
    }

    /// What the game task leaves: the game, its events not stored yet, the last frame's time.
    struct Played: Sendable {
        var game: any VoiceGame
        var pending: [VoiceGameEvent] = []
        var lastTime = 0.0
    }

    /// One message to the page: a view (every 2nd frame, and every frame with events), the
    /// events, or a problem line; the first one names the child and the settings.
    struct Message: Encodable {
        var view: VoiceGameView?
        var events: [VoiceGameEvent]?
        var problem: String?
        var nickname: String?
        var settings: VoiceSettings?
    }

    /// Feeds the frames to the game until it finishes or the socket goes (cancellation ends
    /// `messages`), storing events in batches and sending views.
    static func play(
        _ game: any VoiceGame, messages: AsyncStream<VoiceFeed.Message>, sessionID: Int64, voice: VoiceBridge,
        send: (Message) async throws -> Void
    ) async -> Played {
        var played = Played(game: game)
        var frames = 0
        var sinceStored = 0
        for await message in messages {
            switch message {
            case .problem(let text):
                try? await send(Message(problem: text))
            case .frame(let frame):
                frames += 1
                sinceStored += 1
                played.lastTime = frame.time
                let events = played.game.step(frame)
                played.pending += events
                if played.game.isFinished {  // the last view and events; the caller stores them with the end
                    try? await send(Message(view: played.game.view, events: events))
                    return played
                }
                if sinceStored >= batchFrames, !played.pending.isEmpty {
                    let batch = played.pending
                    if case .success = await voice.run({ try $0.appendEvents(sessionID: sessionID, batch) }) { played.pending = [] }
                    sinceStored = 0
                }
                if !events.isEmpty || frames % 2 == 0 {
                    do { try await send(Message(view: played.game.view, events: events.isEmpty ? nil : events)) } catch { return played }
                }
            }
        }
        return played
    }

    static let html = Web.text(PackageResources.voice_play_html)

    static let css = Web.text(PackageResources.voice_play_css)

    static let javaScript = Web.text(PackageResources.voice_play_js)
}

extension HistoryBridge.Failure {
    var message: String {
        switch self {
        case .notFound(let text), .refused(let text), .unavailable(let text): text
        }
    }
}
