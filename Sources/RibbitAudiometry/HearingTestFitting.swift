import RibbitPrescription

/// A prescription proposed from a stored hearing test (`ribbitd audiogram fit`), and what was
/// done to the thresholds on the way, for the wearer to read before trying it.
public struct ProposedFitting: Sendable, Equatable {
    /// An ear and frequency, with the level concerned (dB HL) where there is one.
    public struct Point: Sendable, Equatable {
        public var ear: Ear
        public var frequencyHz: Int
        public var dBHL: Int?

        public init(ear: Ear, frequencyHz: Int, dBHL: Int?) {
            self.ear = ear
            self.frequencyHz = frequencyHz
            self.dBHL = dBHL
        }
    }
    /// Checked by the prescription parser: its `text` reads back as it is.
    public var prescription: Prescription
    /// No response at the level tested: fitted at that level, though the real threshold is higher.
    public var noResponseAt: [Point]
    /// Measured but without a threshold (inconsistent answers): left out.
    public var undetermined: [Point]
    /// Never measured (beyond the test's ceiling, or the test was stopped): left out.
    public var untested: [Point]
    /// Ears left unfitted because a frequency every prescription needs has no level, and which.
    public var earsLeftOut: [(ear: Ear, missingHz: [Int])]

    public static func == (a: ProposedFitting, b: ProposedFitting) -> Bool {
        a.prescription == b.prescription && a.noResponseAt == b.noResponseAt && a.undetermined == b.undetermined
            && a.untested == b.untested && a.earsLeftOut.map(\.ear) == b.earsLeftOut.map(\.ear)
            && a.earsLeftOut.map(\.missingHz) == b.earsLeftOut.map(\.missingHz)
    }
}

/// Why no prescription is proposed: one line.
public struct FittingRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension HearingTestRecord {
    /// The frequencies a fitting is proposed from: the ones the test measures.
    public static let fittedFrequenciesHz = Set(HearingTest.Plan.clinicalOrder).sorted()

    /// A prescription from this test's thresholds (of the 1 kHz measurement and its retest, the
    /// better), named "self-test DATE", its note the disclaimer. A no response counts at the
    /// level tested (`8000=90nr`), as the fitting rules read an audiometer's; undetermined and
    /// untested frequencies are left out, and an ear missing one of the frequencies every
    /// prescription needs is left out whole. Pure: no I/O.
    ///
    /// The rule stays the rule: a gain above ribbit's maximum (a deep loss, a no response at 90)
    /// plays at the maximum like any prescription's, and the fitting's shortfall says where
    /// (`CompressorFitting.delivery`, as `rx show` does).
    ///
    /// Refused, unless `force`, when the result is unreliable (false alarms, a retest difference)
    /// or nothing was heard anywhere (headphones off, or no answer), or when a threshold may be the
    /// other ear's (`HearingTestFindings.crossHeard`): gains from such thresholds would be wrong,
    /// and loud.
    public func proposedFitting(rule: FittingRule = .camfit, environment: String = "quiet", force: Bool = false) throws(FittingRefusal)
        -> ProposedFitting
    {
        let test = id.map { "hearing test \($0)" } ?? "the hearing test"
        if !force {
            var reasons: [String] = []
            if result.flags.contains(.falseAlarms) {
                let rate = result.falseAlarmRate.map { " (\(Int(($0 * 100).rounded())) % of the chances)" } ?? ""
                reasons.append("too many false alarms\(rate)")
            }
            if result.flags.contains(.retestDifference) {
                let differences = result.retestDifferences.map {
                    "\($0.ear.rawValue) \($0.differenceDB > 0 ? "+" : "")\($0.differenceDB) dB"
                }
                reasons.append(
                    "the 1 kHz retest differs by more than \(HearingTestResult.maximumRetestDifferenceDB) dB"
                        + (differences.isEmpty ? "" : " (\(differences.joined(separator: ", ")))"))
            }
            if result.flags.contains(.noResponseAnywhere) {
                reasons.append("nothing was heard at any frequency (headphones off or muted?)")
            }
            if !reasons.isEmpty {
                throw FittingRefusal(
                    "\(test) is unreliable: \(reasons.joined(separator: "; ")); take the test again, or --force to fit it anyway")
            }
            // A threshold the other ear may have heard, and masking did not confirm, is not this ear's.
            let crossHeard = findings.crossHeard
            if !crossHeard.isEmpty {
                let named = [Ear.right, .left].compactMap { ear -> String? in
                    let hz = crossHeard.filter { $0.ear == ear }.map { String($0.frequencyHz) }
                    return hz.isEmpty ? nil : "the \(ear.rawValue) ear's \(hz.joined(separator: ", ")) Hz"
                }
                throw FittingRefusal(
                    "\(test): \(named.joined(separator: " and ")) may have been heard by the other ear (not confirmed with masking noise); "
                        + "have an audiologist test with masking, or --force to fit it anyway")
            }
        }
        var thresholds: [Ear: [Int: Int]] = [:]
        var silent: [Ear: Set<Int>] = [:]
        var fitting = ProposedFitting(
            prescription: Prescription(name: "", environment: environment), noResponseAt: [], undetermined: [], untested: [],
            earsLeftOut: [])
        for ear in Ear.plotOrderForFitting {
            var levels: [Int: Int] = [:]
            // The half-octaves the ASHA rule added are fitted too; untested, they are not missing.
            let halfOctaves = HearingTest.Plan.interOctaves.map(\.hz).filter { result.threshold(ear: ear, frequencyHz: $0) != nil }
            for frequencyHz in (Self.fittedFrequenciesHz + halfOctaves).sorted() {
                guard let measured = result.threshold(ear: ear, frequencyHz: frequencyHz) else {
                    fitting.untested.append(.init(ear: ear, frequencyHz: frequencyHz, dBHL: nil))
                    continue
                }
                switch measured.status {
                case .threshold:
                    if let level = measured.thresholdDBHL { levels[frequencyHz] = level }
                case .noResponse:
                    levels[frequencyHz] = measured.maximumTestedDBHL
                    silent[ear, default: []].insert(frequencyHz)
                    fitting.noResponseAt.append(.init(ear: ear, frequencyHz: frequencyHz, dBHL: measured.maximumTestedDBHL))
                case .undetermined:
                    fitting.undetermined.append(.init(ear: ear, frequencyHz: frequencyHz, dBHL: nil))
                }
            }
            let missing = Prescription.requiredFrequencies.filter { levels[$0] == nil }
            if missing.isEmpty {
                thresholds[ear] = levels
            } else {
                fitting.earsLeftOut.append((ear, missing))
                silent[ear] = nil
                fitting.noResponseAt.removeAll { $0.ear == ear }
            }
        }
        guard !thresholds.isEmpty else {
            let missing = fitting.earsLeftOut.map { "\($0.ear.rawValue) \($0.missingHz.map(String.init).joined(separator: ", ")) Hz" }
            throw FittingRefusal(
                "\(test) has no ear with levels at 500, 1000, 2000 and 4000 Hz (missing: \(missing.joined(separator: "; "))); take the test again"
            )
        }
        let day = String(date.prefix(10))
        // Through the parser, as every prescription: what is written reads back as proposed.
        do {
            fitting.prescription = try Prescription.authored(
                name: "self-test \(day)", environment: environment, date: day, note: Self.disclaimer, rule: rule, thresholds: thresholds,
                noResponse: silent)
        } catch {
            throw FittingRefusal("the proposed prescription is not valid: \(error)")
        }
        return fitting
    }
}

extension Ear {
    /// Right first, as every ribbit output lists the ears (RibbitPlot's `plotOrder`, which this module cannot see).
    fileprivate static let plotOrderForFitting: [Ear] = [.right, .left]
}
