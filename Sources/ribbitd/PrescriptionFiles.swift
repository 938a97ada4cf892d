import RibbitIntake
import RibbitPrescription
import RibbitSettings

/// Reads and checks a prescription file or picture (intake's read, parse, verify and check).
func readPrescription(_ path: String, intake: Intake) throws(RibbitError) -> (input: PrescriptionInput, accepted: Intake.Accepted) {
    let input: PrescriptionInput
    do { input = try PrescriptionInput.read(path) } catch { throw RibbitError(error) }
    do { return (input, try intake.take(input)) } catch { throw RibbitError(error) }
}

/// Reads and parses a prescription file or picture, without judging its signature.
func loadPrescription(_ path: String) throws(RibbitError) -> Prescription {
    try readPrescription(path, intake: Intake(trusted: [], requireSigned: false)).accepted.prescription
}

/// The config file (`--config`, or the default one when present), one error for every command.
func loadConfig(_ paths: RibbitPaths, explicitPath: String? = nil) throws(RibbitError) -> DaemonConfig {
    do { return try DaemonConfig.load(explicitPath: explicitPath, paths: paths) } catch {
        throw error.kind == .unreadable ? .noInput(error.description) : .config(error.description)
    }
}
