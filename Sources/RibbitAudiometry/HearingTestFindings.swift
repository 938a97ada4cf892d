import RibbitPrescription

extension Transducer {
    /// The least a tone loses crossing the head to the other cochlea (dB): 40 for supra-aural,
    /// circumaural and consumer headphones, 55 for insert earphones (ASHA 2005; the values
    /// automated audiometers such as AMTAS use to decide when to mask).
    public var interauralAttenuationDB: Int { self == .er3a ? 55 : 40 }
}

/// What must be seen before anyone fits this audiogram: ears that differ (a doctor first: an
/// asymmetric or one-sided loss can have a cause a hearing aid hides), and thresholds the other
/// ear may have heard. A test ear whose threshold is within `crossHearingMarginDB` of
/// `interauralAttenuationDB` above the other ear's may have answered with the other ear; the
/// test measures it again with masking noise there (`HearingTest.planMasking`), and where that
/// could not be done (more noise than the headphones play, no plateau) the unmasked threshold is
/// only the best the test ear can be, "unmasked: may be the other ear". The masking rule compares with the other ear's bone conduction, which ribbit
/// does not measure and which can lie 10 dB under its air threshold; and each threshold is
/// uncertain by 5 dB. Pure: from the thresholds.
public struct HearingTestFindings: Sendable, Equatable, Codable {
    /// A threshold the other ear may have heard.
    public struct CrossHeard: Sendable, Equatable, Codable {
        public var ear: Ear
        public var frequencyHz: Int
        public var thresholdDBHL: Int
        public var otherEarDBHL: Int
    }

    /// ASHA (2005) and the AAO-HNS referral criteria: 15 dB or more between the ears at two or
    /// more frequencies.
    public static let asymmetryDB = 15
    public static let asymmetricFrequenciesToRefer = 2
    /// Normal hearing for the unilateral rule: every threshold from 500 Hz to 4 kHz at most this.
    public static let normalDBHL = 25
    /// Flag from the interaural attenuation less this (see above).
    public static let crossHearingMarginDB = 10

    /// Frequencies where the ears differ by `asymmetryDB` or more.
    public var asymmetricFrequenciesHz: [Int]
    /// The ear with a loss when the other hears normally and they differ by `asymmetryDB` somewhere.
    public var unilateralLossEar: Ear?
    public var crossHeard: [CrossHeard]
    public var interauralAttenuationDB: Int
    /// "See a doctor before a hearing aid", one reason a line; then the unmasked thresholds.
    public var lines: [String]

    public var seeADoctor: Bool { asymmetricFrequenciesHz.count >= Self.asymmetricFrequenciesToRefer || unilateralLossEar != nil }

    public init(frequencies: [FrequencyResult], transducer: Transducer) {
        interauralAttenuationDB = transducer.interauralAttenuationDB
        // A no response counts at the level tested: the least it can be.
        func level(_ ear: Ear, _ hz: Int) -> Int? {
            guard let measured = frequencies.kept(ear: ear, frequencyHz: hz) else { return nil }
            return measured.status == .noResponse ? measured.maximumTestedDBHL : measured.thresholdDBHL
        }
        let shared = Set(frequencies.filter { $0.ear == .right }.map(\.frequencyHz))
            .intersection(frequencies.filter { $0.ear == .left }.map(\.frequencyHz)).sorted()
        asymmetricFrequenciesHz = shared.filter { hz in
            guard let right = level(.right, hz), let left = level(.left, hz) else { return false }
            // Two no responses say nothing about a difference.
            let bothSilent = [Ear.right, .left].allSatisfy { frequencies.kept(ear: $0, frequencyHz: hz)?.status == .noResponse }
            return !bothSilent && abs(right - left) >= Self.asymmetryDB
        }
        let speech = [500, 1000, 2000, 4000]
        func normal(_ ear: Ear) -> Bool {
            let levels = speech.compactMap { level(ear, $0) }
            return levels.count == speech.count && levels.allSatisfy { $0 <= Self.normalDBHL }
        }
        func hasLoss(_ ear: Ear) -> Bool {
            let levels = speech.compactMap { level(ear, $0) }
            return levels.count == speech.count && levels.reduce(0, +) > Self.normalDBHL * speech.count
        }
        // And the ears really differ somewhere: 30 against 25 dB HL is no one-sided loss.
        let differ = !asymmetricFrequenciesHz.isEmpty
        unilateralLossEar = [Ear.right, .left].first { ear in differ && hasLoss(ear) && normal(ear == .right ? .left : .right) }
        var crossHeard: [CrossHeard] = []
        for ear in [Ear.right, .left] {
            let other: Ear = ear == .right ? .left : .right
            for measured in frequencies.audiogram(ear: ear) {
                guard measured.status == .threshold, !measured.isMasked, let threshold = measured.thresholdDBHL,
                    let otherLevel = frequencies.kept(ear: other, frequencyHz: measured.frequencyHz)?.thresholdDBHL,
                    threshold - otherLevel >= interauralAttenuationDB - Self.crossHearingMarginDB
                else { continue }
                crossHeard.append(
                    CrossHeard(ear: ear, frequencyHz: measured.frequencyHz, thresholdDBHL: threshold, otherEarDBHL: otherLevel))
            }
        }
        self.crossHeard = crossHeard

        var lines: [String] = []
        if asymmetricFrequenciesHz.count >= Self.asymmetricFrequenciesToRefer {
            lines.append(
                "See a doctor before a hearing aid: the ears differ by \(Self.asymmetryDB) dB or more at "
                    + asymmetricFrequenciesHz.map { "\($0) Hz" }.joined(separator: ", ") + " (an asymmetric loss)")
        }
        if let ear = unilateralLossEar {
            lines.append("See a doctor before a hearing aid: a loss in the \(ear.rawValue) ear only (the other ear hears normally)")
        }
        for ear in [Ear.right, .left] {
            let heard = crossHeard.filter { $0.ear == ear }
            guard !heard.isEmpty else { continue }
            lines.append(
                "Unmasked, may be the other ear: the \(ear.rawValue) ear's "
                    + heard.map { "\($0.frequencyHz) Hz (\($0.thresholdDBHL) against \($0.otherEarDBHL) dB HL)" }.joined(separator: ", ")
                    + " lie \(interauralAttenuationDB - Self.crossHearingMarginDB) dB or more above the other ear's (these headphones "
                    + "lose \(interauralAttenuationDB) dB between the ears) and no masking noise confirmed them; the true threshold "
                    + "may be worse: an audiologist's masked test is needed")
        }
        self.lines = lines
    }
}

extension HearingTestRecord {
    public var findings: HearingTestFindings { HearingTestFindings(frequencies: result.frequencies, transducer: transducer) }
}
