/// Voice onset. Each sound that stays in [targetLowDB, tooLoudDB) for `cloudSeconds` without a
/// break lifts one cloud, at that moment. A sound that lifts none says why when it ends:
/// too-loud (it reached `tooLoudDB` first: the sound is spoilt), not-quiet-first, too-quiet
/// (never reached the range), else too-short (it did not stay in the range long enough). After
/// a cloud the child must be quiet for `quietSeconds` before the next sound counts. A loud
/// unvoiced burst (a clap, a knock) is logged as too-short with its duration and is no attempt.
public struct CloudsGame: VoiceGame {
    public static let quietSeconds = 0.3
    public let kind = VoiceGameKind.clouds
    private var core: GameCore
    /// Seconds in range without a break in the running sound.
    private var run = 0.0
    private var spoilt = false
    private var lifted = false
    private var notQuiet = false
    /// A cloud rose: the next sound must come after `quietSeconds` of quiet.
    private var needQuiet = false
    private var lastEnd = -Double.infinity

    public init(settings: VoiceSettings) { core = GameCore(kind: .clouds, settings: settings, goal: settings.clouds) }

    public mutating func step(_ frame: VoiceFrame) -> [VoiceGameEvent] {
        guard !core.over else { return [] }
        let settings = core.settings
        core.open(frame) { $0.levelDB >= settings.targetLowDB && $0.levelDB <= settings.targetHighDB }
        let sound = core.sound
        if let onset = sound.onset {
            run = 0
            spoilt = false
            lifted = false
            notQuiet = needQuiet && onset - lastEnd < Self.quietSeconds - timeSlack
            if !notQuiet { needQuiet = false }
        }
        if sound.active && !(notQuiet || lifted || spoilt) {
            if frame.levelDB >= settings.tooLoudDB {
                spoilt = true
            } else if frame.levelDB >= settings.targetLowDB {
                run += core.dt
                if run >= settings.cloudSeconds - timeSlack {
                    lifted = true
                    needQuiet = true
                    core.succeed(.cloudLifted, run)
                }
            } else {
                run = 0
            }
        } else if !sound.active {
            run = 0
        }
        if let ended = sound.ended {
            lastEnd = ended.end
            if !lifted && !core.over {
                if ended.tooLoud {
                    core.emit(.tooLoud, ended.peakDB)
                } else if notQuiet {
                    core.emit(.notQuietFirst, ended.duration)
                } else if ended.tooQuiet {
                    core.emit(.tooQuiet, ended.peakDB)
                } else {
                    core.emit(.tooShort, ended.duration)
                }
            }
        }
        if let noise = sound.noise { core.emit(.tooShort, noise.duration) }
        return core.events
    }

    public mutating func exit(time: Double) -> [VoiceGameEvent] { core.exit(time: time) }
    public var view: VoiceGameView { core.view }
    public var summary: VoiceSessionSummary { core.summary }
    public var isFinished: Bool { core.over }
}
