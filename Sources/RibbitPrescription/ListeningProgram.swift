/// A listening program: a named preset over the prescription for a kind of surroundings, as
/// commercial hearing aids offer (and the seed design's "pick where you are"). Named here, where
/// the prescription's `env` selects one and the control protocol carries one; what each does to
/// the sound is RibbitFitting's (`Program.noiseReductionStrength`, `adjust`, `expand`).
public enum Program: String, CaseIterable, Sendable, Codable {
    case quiet, noisy, outdoor, music

    /// The program a prescription's `env` selects: its name when it is one, else quiet.
    public static func `default`(forEnvironment environment: String) -> Program {
        let name = environment.lowercased()
        return Program(rawValue: name) ?? (name == "outdoors" ? .outdoor : .quiet)
    }
}
