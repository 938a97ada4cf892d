/// Loudness in a target range. The balloon's size is the level (`view.level`). Voice in
/// [targetLowDB, targetHighDB] fills the bar over `balloonHoldSeconds`; voice out of it, or the
/// sound ending, empties it (balloon-left-range, value = the level, nil when the voice
/// stopped). At or over `tooLoudDB` it pops (balloon-popped, value = the level) and stays popped
/// until a later sound comes into range. Claps are ignored: the balloon follows the voice only.
public struct BalloonGame: VoiceGame {
    public let kind = VoiceGameKind.balloon
    private var core: GameCore
    private var sounds = 0
    private var poppedIn = 0

    public init(settings: VoiceSettings) { core = GameCore(kind: .balloon, settings: settings) }

    public mutating func step(_ frame: VoiceFrame) -> [VoiceGameEvent] {
        guard !core.over else { return [] }
        let settings = core.settings
        core.open(frame) { $0.levelDB >= settings.targetLowDB && $0.levelDB <= settings.targetHighDB }
        let sound = core.sound
        if sound.onset != nil { sounds += 1 }
        if sound.active {
            if frame.levelDB >= settings.tooLoudDB {
                if !core.view.popped {
                    core.view.popped = true
                    core.view.progress = 0
                    poppedIn = sounds
                    core.emit(.balloonPopped, frame.levelDB)
                }
            } else if core.inRange(frame) {
                if core.view.popped && sounds > poppedIn { core.view.popped = false }
                if !core.view.popped {
                    core.view.progress = min(1, core.view.progress + core.dt / settings.balloonHoldSeconds)
                    if core.view.progress >= 1 - timeSlack { core.succeed() }
                }
            } else if core.view.progress > 0 {
                core.view.progress = 0
                core.emit(.balloonLeftRange, frame.levelDB)
            }
        } else if sound.ended != nil && core.view.progress > 0 {
            core.view.progress = 0
            core.emit(.balloonLeftRange)
        }
        return core.events
    }

    public mutating func exit(time: Double) -> [VoiceGameEvent] { core.exit(time: time) }
    public var view: VoiceGameView { core.view }
    public var summary: VoiceSessionSummary { core.summary }
    public var isFinished: Bool { core.over }
}
