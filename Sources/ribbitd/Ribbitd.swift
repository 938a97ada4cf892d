import ArgumentParser
import Foundation
import RibbitFitting
import RibbitSettings
import RibbitWisdomFile

@main
struct Ribbitd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ribbitd",
        abstract: "An open, real-time hearing aid: reshapes sound to an audiogram.",
        discussion: """
            ribbit amplifies sound by the gains a prescription asks for, per ear, with about 2 ms \
            of delay and an output ceiling that is never exceeded. It is not a medical device; \
            have your hearing tested and fitted by an audiologist.

            Exit codes: 0 ok, 1 a measurement outside its tolerance, 64 bad command line, \
            65 bad prescription, input data or a request the daemon refused, 66 an input file cannot be read, \
            69 the daemon or JACK is not reachable, 73 an output file cannot be written, 78 a mistake in the \
            config file, 70 internal error, 130 interrupted (Ctrl-C at a passphrase prompt).
            """,
        // "NAME VERSION", as GNU tools print it: the first line is what scripts and help2man read.
        version: "ribbitd \(RibbitVersion.current)",
        subcommands: [
            RunCommand.self, StatusCommand.self, LoadCommand.self, UseCommand.self, ListCommand.self, HistoryShowCommand.self,
            RemoveCommand.self, ExportCommand.self, KeepCommand.self, RevertCommand.self, PauseCommand.self, ResumeCommand.self,
            BypassCommand.self, VolumeCommand.self, ProgramCommand.self, StopCommand.self, PortsCommand.self,
            DumpCommand.self, ProcessCommand.self, VerifyCommand.self, RxCommand.self, MeasureCommand.self, CalibrateCommand.self,
            LogCommand.self, WebCommand.self, HearingTestCommand.self, AudiogramCommand.self, VoiceCommand.self,
        ]
    )

    /// Runs the command. A RibbitError becomes one line on stderr and its exit code; anything
    /// unexpected is an internal error (70). Command-line errors keep ArgumentParser's 64.
    static func main() {
        if let message = UnknownCommand.message(for: Array(CommandLine.arguments.dropFirst())) { fail(message, code: 64) }
        var command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        // The plans FFTW measured before on this machine (the audio process writes them), for
        // the engines of `process` and `verify` and the daemon's fitting.
        let cache = RibbitPaths().cacheDirectory
        WisdomFile(cacheDirectory: cache).load()
        // What the compressor's detectors read of speech, per band layout, from this build.
        if let targets = DetectorTargetsFile(cacheDirectory: cache) { DetectorSpeechLevels.keep(in: targets) }
        do {
            try command.run()
        } catch let error as RibbitError {
            fail(error.message, code: error.exitCode.rawValue)
        } catch let error where error is ExitCode || exitCode(for: error) != .failure {
            exit(withError: error)  // --help, --version, validation: ArgumentParser's output and codes
        } catch {
            fail("internal error: \(error); please report it", code: 70)
        }
    }

    static func fail(_ message: String, code: Int32) -> Never {
        // In the journal (a systemd unit's stderr), an error's priority rather than the default info.
        let priority = JournalStream.isStandardError(environment: ProcessInfo.processInfo.environment) ? JournalStream.prefix(.error) : ""
        // The message often quotes input (a file's line, a QR code, the daemon's reply): escaped.
        FileHandle.standardError.write(Data("\(priority)ribbitd: error: \(TerminalText.escapedLines(message))\n".utf8))
        Foundation.exit(code)
    }
}

/// The targets file is the fitting's store between runs.
extension DetectorTargetsFile: DetectorTargetsStore {}
