/// Short syllables. When a sound ends: too-loud if it reached `tooLoudDB`, too-short under
/// `shortestSeconds`, too-long over `syllableMaxSeconds`, too-quiet if it never reached
/// `targetLowDB`; otherwise the dog jumps (dog-jumped, value = the sound's duration). A loud
/// unvoiced burst (a clap, a knock) is logged as too-short with its duration and is no attempt.
public struct DogGame: VoiceGame {
    public let kind = VoiceGameKind.dog
    private var core: GameCore

    public init(settings: VoiceSettings) { core = GameCore(kind: .dog, settings: settings, goal: settings.dogJumps) }

    public mutating func step(_ frame: VoiceFrame) -> [VoiceGameEvent] {
        guard !core.over else { return [] }
        let settings = core.settings
        core.open(frame) { $0.levelDB >= settings.targetLowDB && $0.levelDB <= settings.targetHighDB }
        if let sound = core.sound.ended {
            if sound.tooLoud {
                core.emit(.tooLoud, sound.peakDB)
            } else if sound.durationClass == .tooShort {
                core.emit(.tooShort, sound.duration)
            } else if sound.durationClass != .syllable {
                core.emit(.tooLong, sound.duration)
            } else if sound.tooQuiet {
                core.emit(.tooQuiet, sound.peakDB)
            } else {
                core.succeed(.dogJumped, sound.duration)
            }
        }
        if let noise = core.sound.noise { core.emit(.tooShort, noise.duration) }
        return core.events
    }

    public mutating func exit(time: Double) -> [VoiceGameEvent] { core.exit(time: time) }
    public var view: VoiceGameView { core.view }
    public var summary: VoiceSessionSummary { core.summary }
    public var isFinished: Bool { core.over }
}
