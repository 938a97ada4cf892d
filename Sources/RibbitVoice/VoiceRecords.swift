/// A child the therapist works with, as the store keeps it. Times are Unix seconds (UTC), so
/// the progress figures and the CSV need no Foundation.
public struct VoiceChild: Codable, Sendable, Equatable {
    public var id: Int64
    /// A name or nickname: what the therapist picks from; nothing else identifies the child.
    public var nickname: String
    public var ageYears: Int?
    public var settings: VoiceSettings
    public var created: Double
    /// Hidden from the list of children; sessions and events stay.
    public var archived: Bool

    public init(id: Int64, nickname: String, ageYears: Int?, settings: VoiceSettings, created: Double, archived: Bool = false) {
        self.id = id
        self.nickname = nickname
        self.ageYears = ageYears
        self.settings = settings
        self.created = created
        self.archived = archived
    }
}

/// How a session ended.
public enum VoiceSessionOutcome: String, Codable, Sendable, CaseIterable {
    /// The game reached its end.
    case finished
    /// The child or therapist left with the exit button.
    case exited
    /// Never ended: the browser went away or ribbit stopped (a crash, a power cut).
    case interrupted
}

/// One game played by one child.
public struct VoiceSessionRecord: Codable, Sendable, Equatable {
    public var id: Int64
    public var childID: Int64
    public var game: VoiceGameKind
    /// Unix seconds (UTC).
    public var started: Double
    /// When it ended; for a session never ended, its last event (or its start).
    public var ended: Double
    public var outcome: VoiceSessionOutcome
    /// No end was recorded: still running, or interrupted (it reads as `interrupted`).
    public var open: Bool
    /// The child's settings when the session started.
    public var settings: VoiceSettings
    /// The game's figures, nil when the session never ended.
    public var summary: VoiceSessionSummary?

    public init(
        id: Int64, childID: Int64, game: VoiceGameKind, started: Double, ended: Double, outcome: VoiceSessionOutcome, open: Bool = false,
        settings: VoiceSettings, summary: VoiceSessionSummary?
    ) {
        self.id = id
        self.childID = childID
        self.game = game
        self.started = started
        self.ended = ended
        self.outcome = outcome
        self.open = open
        self.settings = settings
        self.summary = summary
    }

    /// Seconds played (end minus start, never negative).
    public var seconds: Double { max(0, ended - started) }
}

/// A stored event with its session.
public struct VoiceStoredEvent: Codable, Sendable, Equatable {
    public var sessionID: Int64
    public var event: VoiceGameEvent

    public init(sessionID: Int64, event: VoiceGameEvent) {
        self.sessionID = sessionID
        self.event = event
    }
}
