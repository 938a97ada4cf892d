/// The games, by kind.
public enum VoiceGames {
    public static func make(_ kind: VoiceGameKind, settings: VoiceSettings) -> any VoiceGame {
        switch kind {
        case .clouds: CloudsGame(settings: settings)
        case .airplane: AirplaneGame(settings: settings)
        case .dog: DogGame(settings: settings)
        case .balloon: BalloonGame(settings: settings)
        case .pitch: PitchGame(settings: settings)
        }
    }
}

/// What every game shares: the game clock, the sound detector, the level meter, the summary,
/// `started`/`finished`/`exited` and the feedback word. A game calls `open` first on each frame,
/// applies its rules to `sound` (the detector's step), then takes `events`.
struct GameCore: Sendable {
    let settings: VoiceSettings
    var view: VoiceGameView
    var summary = VoiceSessionSummary()
    /// Over: finished or exited; frames are ignored.
    var over = false
    /// The current frame's hop length and game time.
    var dt = 0.01
    var now = 0.0
    var sound = SoundDetector.Step()
    var events: [VoiceGameEvent] = []
    private var detector: SoundDetector
    /// Stream seconds at the game's start (the first frame's hop start).
    private var origin: Double?

    init(kind: VoiceGameKind, settings: VoiceSettings, goal: Int = 1) {
        self.settings = settings
        detector = SoundDetector(settings: settings)
        view = VoiceGameView(game: kind)
        view.goal = goal
    }

    /// Starts a frame's work; `inTarget` says whether an active (voiced, not quiet) frame is in
    /// the game's target, for the summary.
    mutating func open(_ frame: VoiceFrame, inTarget: (VoiceFrame) -> Bool) {
        events = []
        sound = detector.step(frame)
        dt = sound.hopSeconds
        if origin == nil {
            origin = frame.time - dt
            events.append(VoiceGameEvent(time: 0, kind: .started))
        }
        now = frame.time - (origin ?? 0)
        view.time = now
        view.voicing = sound.active
        let span = settings.tooLoudDB - settings.quietDB
        view.level = span > 0 ? min(1, max(0, (frame.levelDB - settings.quietDB) / span)) : 0
        if sound.onset != nil {
            summary.attempts += 1
            view.feedback = nil
        }
        if sound.active {
            summary.voicedSeconds += dt
            if inTarget(frame) { summary.secondsInTarget += dt }
            if let f0 = frame.f0Hz {
                summary.f0LowHz = min(summary.f0LowHz ?? f0, f0)
                summary.f0HighHz = max(summary.f0HighHz ?? f0, f0)
            }
        }
    }

    /// An active frame's level is in the child's target range.
    func inRange(_ frame: VoiceFrame) -> Bool {
        frame.levelDB >= settings.targetLowDB && frame.levelDB <= settings.targetHighDB
    }

    mutating func emit(_ kind: VoiceGameEvent.Kind, _ value: Double? = nil) {
        events.append(VoiceGameEvent(time: now, kind: kind, value: value))
        switch kind {
        case .tooShort: view.feedback = "too short"
        case .tooLong: view.feedback = "too long"
        case .tooQuiet: view.feedback = "too quiet"
        case .tooLoud, .balloonPopped: view.feedback = "too loud"
        case .notQuietFirst: view.feedback = "quiet first"
        // What to do next, in a child's words ("out of range" told a child who stopped to
        // breathe nothing): louder or softer, higher or lower, or keep the voice going.
        case .balloonLeftRange:
            view.feedback = value.map { $0 < settings.targetLowDB ? "louder" : "softer" } ?? "keep going"
        case .pitchLeftBand:
            if let f0 = value {
                // A glide goes over the band on purpose: no word while it does.
                view.feedback = settings.pitchExercise == .glide ? nil : f0 < settings.pitchLowHz ? "higher" : "lower"
            } else {
                view.feedback = "keep going"
            }
        case .cloudLifted, .dogJumped, .planeLanded, .pitchInBand: view.feedback = nil
        case .started, .finished, .exited, .planeTookOff: break
        }
    }

    /// A success: a cloud, a jump, a fill, a landing, a hold (the last two have no event of
    /// their own: `finished` says it). Finishes the game at the goal.
    mutating func succeed(_ kind: VoiceGameEvent.Kind? = nil, _ value: Double? = nil) {
        if let kind { emit(kind, value) }
        summary.successes += 1
        view.done += 1
        if view.done >= view.goal {
            view.finished = true
            over = true
            emit(.finished)
        }
    }

    /// `time` is on the frames' clock (`VoiceFrame.time`).
    mutating func exit(time: Double) -> [VoiceGameEvent] {
        guard !over else { return [] }
        over = true
        let at = origin.map { max(0, time - $0) } ?? 0
        return [VoiceGameEvent(time: at, kind: .exited)]
    }
}

/// Times built from 10 ms hops are compared with this slack.
let timeSlack = 1e-6
