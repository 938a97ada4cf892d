import ArgumentParser
import Foundation
import RibbitAudiogramReport

struct AudiogramReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write a printable report of a hearing test for your doctor (one HTML page, A4).",
        discussion:
            "Self-contained: the audiogram, the thresholds, the noise, the reliability and the calibration. Print it, or save it as PDF from a browser."
    )

    @Argument(help: ArgumentHelp("The test's id (`ribbitd audiogram list`).", valueName: "ID")) var id: Int64
    @Option(
        name: .shortAndLong, help: ArgumentHelp("The report (FILE.html).", valueName: "FILE.html"), completion: .file(extensions: ["html"]))
    var output: String

    func run() throws {
        let ext = (output as NSString).pathExtension.lowercased()
        guard ext == "html" || ext == "htm" else {
            throw RibbitError.usage("\(output): the report is HTML; name it FILE.html; nothing written")
        }
        let record = try findHearingTest(id)
        try RxMakeCommand.writeText(Data(AudiogramReportHTML.render(record).utf8), to: output)
        print("wrote \(output): hearing test \(id), \(record.localDate)\(record.result.isUnreliable ? " (flagged unreliable)" : "")")
    }
}
