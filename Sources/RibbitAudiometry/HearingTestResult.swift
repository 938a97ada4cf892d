import RibbitPrescription

/// One ear's measurement at one frequency.
public struct FrequencyResult: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable {
        case threshold
        /// Not heard at `maximumTestedDBHL`: the threshold is above it (an audiogram's arrow).
        case noResponse = "no-response"
        /// Answers too inconsistent to find a threshold within the allowed runs: retest.
        case undetermined
    }
    public var ear: Ear
    public var frequencyHz: Int
    /// The second 1 kHz measurement: the retest indicator. The audiogram keeps the better of the
    /// two (`[FrequencyResult].kept`).
    public var isRetest: Bool
    public var status: Status
    /// Only for `.threshold`: never a number the listener did not give.
    public var thresholdDBHL: Int?
    public var maximumTestedDBHL: Int
    /// Tone presentations (catch trials not counted).
    public var presentations: Int
    /// The loudest ambient noise it was measured in: the microphone's octave band around the
    /// frequency, dB SPL (nil: not measured).
    public var ambientNoiseDBSPL: Double?
    /// Measured with masking noise in the other ear: its effective level (dB EM) at the threshold
    /// (or at the maximum, for a no response), once the threshold held with 10 dB more noise (the
    /// plateau). nil: measured without masking.
    public var maskingDBEM: Int? = nil

    public var isMasked: Bool { maskingDBEM != nil }
}

extension FrequencyResult {
    /// "35 dB HL", "no response at 90", "undetermined".
    public var levelText: String {
        switch status {
        case .threshold: thresholdDBHL.map { "\($0) dB HL" } ?? "undetermined"
        case .noResponse: "no response at \(maximumTestedDBHL)"
        case .undetermined: "undetermined"
        }
    }
}

extension [FrequencyResult] {
    /// The audiogram's value at an ear and frequency. A masked measurement replaces the unmasked
    /// ones (they may have been the other ear). Where it was measured twice (the 1 kHz retest)
    /// the better one is kept, as ASHA (2005) and the BSA ask: the lower threshold when both are
    /// numbers, a threshold over a no-response or an undetermined run.
    public func kept(ear: Ear, frequencyHz: Int) -> FrequencyResult? {
        var measured = filter { $0.ear == ear && $0.frequencyHz == frequencyHz }
        if measured.contains(where: \.isMasked) { measured = measured.filter(\.isMasked) }
        return measured.min { a, b in
            switch (a.thresholdDBHL, b.thresholdDBHL) {
            case (let x?, let y?): x < y || (x == y && !a.isRetest)
            case (_?, nil): true
            case (nil, _?): false
            case (nil, nil): !a.isRetest && b.isRetest
            }
        }
    }

    /// One ear's audiogram: the kept value at each frequency measured, low to high.
    public func audiogram(ear: Ear) -> [FrequencyResult] {
        Set(filter { $0.ear == ear }.map(\.frequencyHz)).sorted().compactMap { kept(ear: ear, frequencyHz: $0) }
    }

    /// The 1 kHz pair of an ear, when it was measured twice.
    public func retestPair(ear: Ear) -> (first: FrequencyResult, retest: FrequencyResult)? {
        guard let retest = first(where: { $0.ear == ear && $0.isRetest }),
            let first = first(where: { $0.ear == ear && $0.frequencyHz == retest.frequencyHz && !$0.isRetest && !$0.isMasked })
        else { return nil }
        return (first, retest)
    }
}

/// One presentation as it was given, and its answer, for an audit. Reads like the
/// presentation (`entry.levelDBHL`) as well as the answer.
@dynamicMemberLookup
public struct LoggedPresentation: Sendable, Equatable, Codable {
    public var presentation: Presentation
    public var responded: Bool
    /// From the first pulse's onset.
    public var responseTimeMs: Int?
    /// The ear the listener named, when the interface asks.
    public var answeredEar: Ear?
    /// A response to a catch trial (silent, or naming the wrong ear).
    public var falseAlarm = false
    /// The microphone's octave band around the frequency while it played, dB SPL.
    public var ambientNoiseDBSPL: Double?

    public subscript<T>(dynamicMember keyPath: KeyPath<Presentation, T>) -> T { presentation[keyPath: keyPath] }

    init(presentation: Presentation, outcome: Outcome) {
        self.presentation = presentation
        if case .responded(let time, let ear) = outcome {
            responded = true
            responseTimeMs = time
            answeredEar = ear
        } else {
            responded = false
        }
    }
}

/// The 1 kHz retest of one ear: second minus first threshold.
public struct RetestDifference: Sendable, Equatable, Codable {
    public var ear: Ear
    public var differenceDB: Int
}

/// Why a result should not be trusted as it stands. Carried inside the result, so every export
/// made from it says so too.
public enum ReliabilityFlag: String, Sendable, Codable {
    /// More than `HearingTestResult.maximumFalseAlarmRate` of the catch trials, or of all the
    /// chances to press wrongly (catch trials and waits), answered.
    case falseAlarms = "false-alarms"
    /// The two 1 kHz measurements of an ear differ by more than `maximumRetestDifferenceDB`, or
    /// one is a number and the other is not.
    case retestDifference = "retest-difference"
    /// Some frequency found no threshold within the allowed runs.
    case undetermined
    /// Nothing heard at any frequency at its maximum: the headphones may be off, unplugged or
    /// muted, or the listener never answered. Possible for a profound loss too, so it asks for a
    /// check rather than calling the test unreliable.
    case noResponseAnywhere = "no-response-anywhere"
    /// The test was stopped before every frequency was measured.
    case incomplete
}

/// The whole test: thresholds per ear and frequency, reliability indicators and flags, and every
/// presentation. JSON through Codable, for the store and the web app.
public struct HearingTestResult: Sendable, Equatable, Codable {
    public static let maximumFalseAlarmRate = 0.20
    /// ASHA (2005): a retest within 5 dB agrees.
    public static let maximumRetestDifferenceDB = 5

    public var frequencies: [FrequencyResult]
    public var catchTrials: Int
    public var catchTrialFalseAlarms: Int
    /// Presses during a wait, outside any tone's window.
    public var strayPresses: Int
    /// False alarms on catch trials / catch trials (nil without catch trials).
    public var catchTrialFalseAlarmRate: Double?
    /// (catch-trial false alarms + stray presses) / (catch trials + waits): every chance to press
    /// when nothing was there.
    public var falseAlarmRate: Double?
    /// Second minus first 1 kHz threshold per ear, where both are numbers.
    public var retestDifferences: [RetestDifference]
    /// Over the tones answered (catch trials excluded), from the first pulse's onset.
    public var meanResponseTimeMs: Double?
    public var flags: [ReliabilityFlag]
    public var log: [LoggedPresentation]

    /// Whether the room's noise was measured while any tone played: without a microphone signal
    /// the room is "not checked", never "quiet".
    /// Records stored before this said -99 dB SPL for the same silence: not checked either.
    public var roomNoiseChecked: Bool { frequencies.contains { ($0.ambientNoiseDBSPL ?? -99) > -99 } }

    /// False alarms or a retest difference: the thresholds may be wrong, not just the setup.
    public var isUnreliable: Bool { flags.contains(.falseAlarms) || flags.contains(.retestDifference) }

    /// The audiogram's value at an ear and frequency: of a measurement and its retest, the better.
    public func threshold(ear: Ear, frequencyHz: Int) -> FrequencyResult? {
        frequencies.kept(ear: ear, frequencyHz: frequencyHz)
    }

    init(plan: HearingTest.Plan, frequencies: [FrequencyResult], log: [LoggedPresentation], strayPresses: Int, complete: Bool) {
        self.frequencies = frequencies
        self.log = log
        self.strayPresses = strayPresses
        let catches = log.filter { $0.catchTrial != nil }
        catchTrials = catches.count
        catchTrialFalseAlarms = catches.filter(\.falseAlarm).count
        catchTrialFalseAlarmRate = catchTrials > 0 ? Double(catchTrialFalseAlarms) / Double(catchTrials) : nil
        // Each presentation had a wait in which a press was a false alarm.
        let chances = catchTrials + log.count
        falseAlarmRate = chances > 0 ? Double(catchTrialFalseAlarms + strayPresses) / Double(chances) : nil
        let answered = log.compactMap { $0.catchTrial == nil ? $0.responseTimeMs : nil }
        meanResponseTimeMs = answered.isEmpty ? nil : Double(answered.reduce(0, +)) / Double(answered.count)

        var flags: [ReliabilityFlag] = []
        if (catchTrialFalseAlarmRate ?? 0) > Self.maximumFalseAlarmRate || (falseAlarmRate ?? 0) > Self.maximumFalseAlarmRate {
            flags.append(.falseAlarms)
        }
        var retest: [RetestDifference] = []
        var retestMismatch = false
        for ear in plan.ears {
            let both = frequencies.filter { $0.ear == ear && $0.frequencyHz == 1000 && !$0.isMasked }
            guard let first = both.first(where: { !$0.isRetest }), let second = both.first(where: \.isRetest) else { continue }
            switch (first.thresholdDBHL, second.thresholdDBHL) {
            case (let a?, let b?):
                retest.append(RetestDifference(ear: ear, differenceDB: b - a))
                if abs(b - a) > Self.maximumRetestDifferenceDB { retestMismatch = true }
            case (nil, nil): break
            default: retestMismatch = true
            }
        }
        retestDifferences = retest
        if retestMismatch { flags.append(.retestDifference) }
        if frequencies.contains(where: { $0.status == .undetermined }) { flags.append(.undetermined) }
        if !frequencies.isEmpty && frequencies.allSatisfy({ $0.status == .noResponse }) { flags.append(.noResponseAnywhere) }
        if !complete { flags.append(.incomplete) }
        self.flags = flags
    }
}
