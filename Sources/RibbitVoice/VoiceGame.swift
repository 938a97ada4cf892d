/// The five voice exercises. Each is a pure state machine fed with the analysis' frames (100
/// a second); the web app draws `view` and stores the events.
public enum VoiceGameKind: String, Codable, Sendable, CaseIterable {
    /// Voice onset: each sound in the range, long enough, lifts a cloud; quiet before the next.
    case clouds
    /// Long steady phonation: the plane flies while the voice keeps going, lands at the house.
    case airplane
    /// Short syllables: each one makes the dog jump towards its bone.
    case dog
    /// Loudness in a target range: the balloon follows the level; too loud pops it.
    case balloon
    /// Pitch: keep the voice in the pitch band.
    case pitch
}

/// Something that happened in a game, stored with the child and the session.
public struct VoiceGameEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case started, finished, exited
        case tooShort = "too-short", tooLong = "too-long", tooQuiet = "too-quiet", tooLoud = "too-loud"
        /// Clouds: a sound came before the child was quiet again.
        case notQuietFirst = "not-quiet-first"
        case cloudLifted = "cloud-lifted"
        case planeTookOff = "plane-took-off", planeLanded = "plane-landed"
        case dogJumped = "dog-jumped"
        case balloonPopped = "balloon-popped", balloonLeftRange = "balloon-left-range"
        case pitchInBand = "pitch-in-band", pitchLeftBand = "pitch-left-band"
    }
    /// Seconds from the game's start.
    public var time: Double
    public var kind: Kind
    /// The sound's duration (s), level (dB) or pitch (Hz), when the event has one.
    public var value: Double?

    public init(time: Double, kind: Kind, value: Double? = nil) {
        self.time = time
        self.kind = kind
        self.value = value
    }
}

/// What the screen draws, the same fields for every game (unused ones stay at their default).
public struct VoiceGameView: Codable, Sendable, Equatable {
    public var game: VoiceGameKind
    /// Seconds from the game's start.
    public var time: Double = 0
    public var finished = false
    /// Clouds lifted / dog jumps made / balloon fills of `goal`.
    public var done = 0
    public var goal = 1
    /// The progress bar, 0...1: the balloon's hold, the airplane's way to the house, the pitch hold.
    public var progress = 0.0
    /// The voice's level in the child's range, 0 (quiet) to 1 (too loud), clamped.
    public var level = 0.0
    /// A voice sounds now.
    public var voicing = false
    /// The airplane's speed, 0 (landed/parked) to 1.
    public var speed = 0.0
    /// The airplane's height, 0 (ground) to 1.
    public var altitude = 0.0
    /// The balloon popped (it stays popped until the next sound in range).
    public var popped = false
    /// Pitch game: the voice's pitch and the band on the display's scale, 0...1 (log frequency
    /// between `VoiceGameView.pitchDisplayHz`); nil when unvoiced.
    public var pitch: Double? = nil
    public var bandLow = 0.0
    public var bandHigh = 0.0
    /// A short word for the child/therapist about the last sound ("too short", "too loud",
    /// "quiet first"), nil when nothing to say.
    public var feedback: String? = nil

    /// The pitch display's range (log scale).
    public static let pitchDisplayHz = 60.0...600.0

    public init(game: VoiceGameKind) { self.game = game }
}

/// The figures a session leaves for the progress charts.
public struct VoiceSessionSummary: Codable, Sendable, Equatable {
    /// Seconds of voice, and of voice in the target (level range, or pitch band for pitch).
    public var voicedSeconds = 0.0
    public var secondsInTarget = 0.0
    /// Sounds made, and those that counted (a cloud, a jump, a fill, a landing, a hold).
    public var attempts = 0
    public var successes = 0
    /// The lowest and highest voiced f0 (Hz) over the session; nil when nothing was voiced.
    public var f0LowHz: Double? = nil
    public var f0HighHz: Double? = nil

    public init() {}
}

/// A game: frames in, events out. `exit` is the child or therapist leaving before the end.
public protocol VoiceGame: Sendable {
    var kind: VoiceGameKind { get }
    init(settings: VoiceSettings)
    /// Feeds one frame (in time order); returns what happened on it (the first call also
    /// returns `started`, the last one `finished`).
    mutating func step(_ frame: VoiceFrame) -> [VoiceGameEvent]
    /// Ends the game early (an `exited` event); no effect once finished. `time` is on the
    /// frames' clock (`VoiceFrame.time`); the event's time is from the game's start.
    mutating func exit(time: Double) -> [VoiceGameEvent]
    var view: VoiceGameView { get }
    var summary: VoiceSessionSummary { get }
    /// Over: finished or exited, frames are ignored (`view.finished` says the goal was reached).
    var isFinished: Bool { get }
}
