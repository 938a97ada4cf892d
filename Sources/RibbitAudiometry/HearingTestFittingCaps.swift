import RibbitPrescription

extension ProposedFitting {
    /// A gain the rule prescribed above ribbit's limit, and played at the limit instead.
    public struct Cap: Sendable, Equatable {
        public var ear: Ear
        public var frequencyHz: Int
        /// What the rule gives (for soft speech, with compression), dB.
        public var prescribedDB: Double
        /// What is played, dB: `Prescription.maxGainDB`.
        public var playedDB: Double

        public init(ear: Ear, frequencyHz: Int, prescribedDB: Double, playedDB: Double = Prescription.maxGainDB) {
            self.ear = ear
            self.frequencyHz = frequencyHz
            self.prescribedDB = prescribedDB
            self.playedDB = playedDB
        }

        /// How much gain the cap takes away, dB.
        public var cutDB: Double { prescribedDB - playedDB }
    }

    /// A cap deeper than this means the rule wanted far more than ribbit gives: an audiologist's job.
    public static let audiologistCutDB = 10.0
}

extension Prescription {
    /// This prescription with every gain above `Prescription.maxGainDB` played at it, as
    /// over-the-counter aids cap, and which gains were capped; nil when none is over. The
    /// thresholds stay (the plots and reports show the measured audiogram) but the rule
    /// becomes `explicit`: camfit's g50/g80 per ear (g80 capped too, so never above g50), or a
    /// linear rule's `gain-` per ear, in tenths of a dB. The output limits do not change: no
    /// UCL or `limit:` is added, and camfit's bands still compress.
    public func cappedToMaxGain() -> (prescription: Prescription, capped: [ProposedFitting.Cap])? {
        let top = Prescription.maxGainDB
        func played(_ gains: [Int: Double]) -> [Int: Double] { gains.mapValues { (min($0, top) * 10).rounded() / 10 } }
        var capped: [ProposedFitting.Cap] = []
        var rx = self
        rx.rule = .explicit
        for ear in [Ear.right, .left] where thresholds[ear] != nil {
            if let level = levelGains(for: ear) {
                capped += level.g50.filter { $0.value > top }.map { .init(ear: ear, frequencyHz: $0.key, prescribedDB: $0.value) }
                rx.gains50[ear] = played(level.g50)
                rx.gains80[ear] = played(level.g80)
            } else if let gains = targetGains(for: ear) {
                capped += gains.filter { $0.value > top }.map { .init(ear: ear, frequencyHz: $0.key, prescribedDB: $0.value) }
                rx.explicitGains[ear] = played(gains)
            }
        }
        guard !capped.isEmpty else { return nil }
        // Which rule's gains these are, for whoever reads the text.
        rx.extensions.append((key: "x-fitted", value: "\(rule.rawValue), gains capped at +\(Int(top)) dB"))
        let order: [Ear: Int] = [.right: 0, .left: 1]
        return (rx, capped.sorted { (order[$0.ear]!, $0.frequencyHz) < (order[$1.ear]!, $1.frequencyHz) })
    }
}
