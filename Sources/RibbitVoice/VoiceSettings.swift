/// A child's settings, set by the therapist: the loudness range the games ask for, the
/// durations that make a sound a syllable or a sustained vowel, and the pitch band. Levels are
/// on the voice stream's scale (dB SPL when calibrated, otherwise dBFS).
public struct VoiceSettings: Codable, Sendable, Equatable {
    /// Under this the child is quiet (a sound ends when the level falls under it).
    public var quietDB: Double
    /// The voice range: a sound counts when its level is in it (the balloon's target range too).
    public var targetLowDB: Double
    public var targetHighDB: Double
    /// At or over this a sound is too loud: it counts for nothing and pops the balloon.
    public var tooLoudDB: Double
    /// A sound shorter than this is too short (a clap, a knock, a cough).
    public var shortestSeconds: Double
    /// A syllable (the dog's jump) lasts at most this.
    public var syllableMaxSeconds: Double
    /// A cloud rises after this much voice in the range.
    public var cloudSeconds: Double
    /// A sound longer than this is too long (for the games that want short sounds).
    public var longestSeconds: Double
    /// Clouds to lift, jumps to the bone.
    public var clouds: Int
    public var dogJumps: Int
    /// Seconds of voice the airplane needs to reach the house.
    public var flightSeconds: Double
    /// Seconds in the target range that fill the balloon's bar.
    public var balloonHoldSeconds: Double
    /// The pitch exercise's band, and how long the voice must stay in it.
    public var pitchLowHz: Double
    public var pitchHighHz: Double
    public var pitchHoldSeconds: Double
    /// The pitch game's exercise: hold the band, or glide up and down through it.
    public var pitchExercise: PitchExercise = .hold

    public enum PitchExercise: String, Codable, Sendable, CaseIterable {
        /// Keep the voice in the band for `pitchHoldSeconds`.
        case hold
        /// In one sound: from under the band, up over it, and back under it.
        case glide
    }

    public init(
        quietDB: Double, targetLowDB: Double, targetHighDB: Double, tooLoudDB: Double, shortestSeconds: Double = 0.15,
        syllableMaxSeconds: Double = 0.6, cloudSeconds: Double = 0.8, longestSeconds: Double = 8, clouds: Int = 5, dogJumps: Int = 6,
        flightSeconds: Double = 6, balloonHoldSeconds: Double = 3, pitchLowHz: Double = 200, pitchHighHz: Double = 300,
        pitchHoldSeconds: Double = 2, pitchExercise: PitchExercise = .hold
    ) {
        self.quietDB = quietDB
        self.targetLowDB = targetLowDB
        self.targetHighDB = targetHighDB
        self.tooLoudDB = tooLoudDB
        self.shortestSeconds = shortestSeconds
        self.syllableMaxSeconds = syllableMaxSeconds
        self.cloudSeconds = cloudSeconds
        self.longestSeconds = longestSeconds
        self.clouds = clouds
        self.dogJumps = dogJumps
        self.flightSeconds = flightSeconds
        self.balloonHoldSeconds = balloonHoldSeconds
        self.pitchLowHz = pitchLowHz
        self.pitchHighHz = pitchHighHz
        self.pitchHoldSeconds = pitchHoldSeconds
        self.pitchExercise = pitchExercise
    }

    // Settings stored before a field existed still decode (the field takes its default).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        quietDB = try c.decode(Double.self, forKey: .quietDB)
        targetLowDB = try c.decode(Double.self, forKey: .targetLowDB)
        targetHighDB = try c.decode(Double.self, forKey: .targetHighDB)
        tooLoudDB = try c.decode(Double.self, forKey: .tooLoudDB)
        shortestSeconds = try c.decode(Double.self, forKey: .shortestSeconds)
        syllableMaxSeconds = try c.decode(Double.self, forKey: .syllableMaxSeconds)
        cloudSeconds = try c.decode(Double.self, forKey: .cloudSeconds)
        longestSeconds = try c.decode(Double.self, forKey: .longestSeconds)
        clouds = try c.decode(Int.self, forKey: .clouds)
        dogJumps = try c.decode(Int.self, forKey: .dogJumps)
        flightSeconds = try c.decode(Double.self, forKey: .flightSeconds)
        balloonHoldSeconds = try c.decode(Double.self, forKey: .balloonHoldSeconds)
        pitchLowHz = try c.decode(Double.self, forKey: .pitchLowHz)
        pitchHighHz = try c.decode(Double.self, forKey: .pitchHighHz)
        pitchHoldSeconds = try c.decode(Double.self, forKey: .pitchHoldSeconds)
        pitchExercise = try c.decodeIfPresent(PitchExercise.self, forKey: .pitchExercise) ?? .hold
    }

    /// A start for a child speaking about 30 cm from the microphone: dB SPL when the
    /// microphone is calibrated, dBFS otherwise.
    public static func standard(calibrated: Bool) -> VoiceSettings {
        calibrated
            ? VoiceSettings(quietDB: 45, targetLowDB: 55, targetHighDB: 75, tooLoudDB: 85)
            : VoiceSettings(quietDB: -55, targetLowDB: -45, targetHighDB: -25, tooLoudDB: -12)
    }

    /// What is wrong with these settings, one line each (empty: usable).
    public var problems: [String] {
        var problems: [String] = []
        if !(quietDB < targetLowDB && targetLowDB < targetHighDB && targetHighDB <= tooLoudDB) {
            problems.append("levels must rise: quiet < target low < target high <= too loud")
        }
        if !(0 < shortestSeconds && shortestSeconds < syllableMaxSeconds && syllableMaxSeconds < longestSeconds) {
            problems.append("durations must rise: 0 < shortest < syllable max < longest")
        }
        if !(shortestSeconds <= cloudSeconds && cloudSeconds < longestSeconds) {
            problems.append("a cloud's duration must be between the shortest and the longest sound")
        }
        if !(1...20).contains(clouds) || !(1...20).contains(dogJumps) { problems.append("clouds and jumps: 1 to 20") }
        if !(flightSeconds > 0 && balloonHoldSeconds > 0 && pitchHoldSeconds > 0) { problems.append("times must be positive") }
        if !(60 <= pitchLowHz && pitchLowHz < pitchHighHz && pitchHighHz <= 1000) {
            problems.append("pitch band: 60 <= low < high <= 1000 Hz")
        }
        return problems
    }
}
