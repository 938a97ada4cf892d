/// Long steady phonation. The plane appears at the first sound (plane-took-off). While the
/// voice keeps going its speed ramps up to 1 over `rampUpSeconds`; when the voice stops it
/// slows to 0 over `slowDownSeconds` and sinks with it (altitude follows speed). The way to the
/// house grows by speed * dt / flightSeconds, so steady voice lands it after flightSeconds +
/// rampUpSeconds / 2. A too-loud voice is logged once a sound (too-loud, value = level) and
/// holds the speed (no bonus). Claps are ignored: the plane follows the voice only.
public struct AirplaneGame: VoiceGame {
    public static let rampUpSeconds = 0.5
    public static let slowDownSeconds = 1.5
    public let kind = VoiceGameKind.airplane
    private var core: GameCore
    private var flying = false
    private var loudLogged = false

    public init(settings: VoiceSettings) { core = GameCore(kind: .airplane, settings: settings) }

    public mutating func step(_ frame: VoiceFrame) -> [VoiceGameEvent] {
        guard !core.over else { return [] }
        let settings = core.settings
        core.open(frame) { $0.levelDB >= settings.targetLowDB && $0.levelDB <= settings.targetHighDB }
        let sound = core.sound
        if sound.onset != nil {
            loudLogged = false
            if !flying {
                flying = true
                core.emit(.planeTookOff)
            }
        }
        guard flying else { return core.events }
        if sound.active && frame.levelDB >= settings.tooLoudDB {
            if !loudLogged {
                loudLogged = true
                core.emit(.tooLoud, frame.levelDB)
            }
        } else if sound.active {
            core.view.speed = min(1, core.view.speed + core.dt / Self.rampUpSeconds)
        } else {
            core.view.speed = max(0, core.view.speed - core.dt / Self.slowDownSeconds)
        }
        core.view.altitude = core.view.speed
        core.view.progress = min(1, core.view.progress + core.view.speed * core.dt / settings.flightSeconds)
        if core.view.progress >= 1 - timeSlack {
            core.view.speed = 0
            core.view.altitude = 0
            core.succeed(.planeLanded)
        }
        return core.events
    }

    public mutating func exit(time: Double) -> [VoiceGameEvent] { core.exit(time: time) }
    public var view: VoiceGameView { core.view }
    public var summary: VoiceSessionSummary { core.summary }
    public var isFinished: Bool { core.over }
}
