import Glibc

/// Pitch (SpeechViewer had it, Hlásek did not), on voiced frames' f0 at or over `quietDB`.
/// - hold: f0 in [pitchLowHz, pitchHighHz] fills the bar over `pitchHoldSeconds`; entering the
///   band logs pitch-in-band (value = f0), leaving it (a voiced f0 outside, or the sound ending)
///   logs pitch-left-band (value = f0, nil when the voice stopped) and empties the bar.
/// - glide: in one sound, from under the band, up over it and back under it. The bar is the
///   way: half on the way up (log f0 across the band), half on the way down; the sound ending
///   first starts it again. Crossing the band's edges logs pitch-in-band / pitch-left-band.
/// Claps are ignored: the game follows the voice only.
public struct PitchGame: VoiceGame {
    public let kind = VoiceGameKind.pitch
    private var core: GameCore
    private var inBand = false
    private var glide = Glide.waiting

    private enum Glide { case waiting, under, over }

    public init(settings: VoiceSettings) {
        core = GameCore(kind: .pitch, settings: settings)
        core.view.bandLow = Self.display(settings.pitchLowHz)
        core.view.bandHigh = Self.display(settings.pitchHighHz)
    }

    /// A frequency's place on the pitch display (log scale over `VoiceGameView.pitchDisplayHz`), 0...1.
    public static func display(_ hz: Double) -> Double {
        let range = VoiceGameView.pitchDisplayHz
        return min(1, max(0, log2(hz / range.lowerBound) / log2(range.upperBound / range.lowerBound)))
    }

    public mutating func step(_ frame: VoiceFrame) -> [VoiceGameEvent] {
        guard !core.over else { return [] }
        let settings = core.settings
        let band = settings.pitchLowHz...settings.pitchHighHz
        core.open(frame) { $0.f0Hz.map { band.contains($0) } ?? false }
        let sound = core.sound
        let f0 = sound.active ? frame.f0Hz : nil
        core.view.pitch = f0.map(Self.display)
        if sound.onset != nil { glide = .waiting }
        if let f0 {
            if band.contains(f0) != inBand {
                inBand.toggle()
                core.emit(inBand ? .pitchInBand : .pitchLeftBand, f0)
            }
            switch settings.pitchExercise {
            case .hold: hold(f0, band: band)
            case .glide: glideStep(f0, band: band)
            }
        } else if sound.ended != nil {
            if inBand {
                inBand = false
                core.emit(.pitchLeftBand)
            }
            glide = .waiting
            core.view.progress = 0
        }
        return core.events
    }

    private mutating func hold(_ f0: Double, band: ClosedRange<Double>) {
        guard band.contains(f0) else {
            core.view.progress = 0
            return
        }
        core.view.progress = min(1, core.view.progress + core.dt / core.settings.pitchHoldSeconds)
        if core.view.progress >= 1 - timeSlack { core.succeed() }
    }

    private mutating func glideStep(_ f0: Double, band: ClosedRange<Double>) {
        let across = min(1, max(0, log2(f0 / band.lowerBound) / log2(band.upperBound / band.lowerBound)))
        switch glide {
        case .waiting:
            if f0 < band.lowerBound { glide = .under }
        case .under:
            core.view.progress = max(core.view.progress, across / 2)
            if f0 > band.upperBound { glide = .over }
        case .over:
            core.view.progress = max(core.view.progress, 1 - across / 2)
            if f0 < band.lowerBound {
                core.view.progress = 1
                core.succeed()
            }
        }
    }

    public mutating func exit(time: Double) -> [VoiceGameEvent] { core.exit(time: time) }
    public var view: VoiceGameView { core.view }
    public var summary: VoiceSessionSummary { core.summary }
    public var isFinished: Bool { core.over }
}
