import ArgumentParser
import Foundation
import RibbitDSP
import RibbitFitting
import RibbitIntake
import RibbitMeasure
import RibbitMonitor
import RibbitPrescription

struct MeasureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure",
        abstract: "Measure the gain between a sound file and its processed version, against a prescription.",
        discussion: """
            Estimates the magnitude response from IN to OUT (Welch power spectra, 4096-sample \
            Hann segments, +-1/24 octave around each frequency) and prints it beside the \
            prescription's target at each audiometric frequency. Frequencies where IN has too \
            little energy to measure are marked. Speech works; broadband noise works best.
            """
    )

    @Argument(help: "The original sound file.", completion: .soundFile) var input: String
    @Argument(help: "The processed sound file.", completion: .soundFile) var output: String
    @Option(name: .customLong("rx"), help: ArgumentHelp("The prescription (.rx text).", valueName: "RX"), completion: .prescriptionText)
    var prescriptionPath: String
    @Option(help: "For mono files: whose fitting OUT was made with.") var ear: Ear?
    @Option(help: ArgumentHelp("Exit 1 if any error from 250 to 6000 Hz exceeds this many dB.", valueName: "DB")) var tolerance: Double?

    func run() throws {
        let rx = try loadPrescription(prescriptionPath)
        let (inReader, outReader) = (try openAudio(input), try openAudio(output))
        guard inReader.format.sampleRate == outReader.format.sampleRate, inReader.format.channelCount == outReader.format.channelCount
        else {
            throw RibbitError.data(
                "\(input) and \(output) differ in sample rate or channels; measure a file against its own processed version")
        }
        let ears = try ears(channelCount: inReader.format.channelCount, ear: ear, path: input)
        let sampleRate = Double(inReader.format.sampleRate)
        let fitting: Fitting
        do { fitting = try Fitting(prescription: rx, sampleRate: sampleRate) } catch { throw RibbitError.data(error.description) }
        let (x, y) = (inReader.readAll(), outReader.readAll())

        var worst = 0.0
        let frequencies = Prescription.audiometricFrequencies
        print("measured gain of \(output) against \(input), prescription \(rx.name)")
        print(
            "frequency (Hz)".padding(toLength: 20, withPad: " ", startingAt: 0) + frequencies.map { String($0).leftPadded(to: 7) }.joined())
        for (channel, ear) in ears.enumerated() {
            let spectra = Spectra.crossSpectra(input: x[channel], output: y[channel], sampleRate: sampleRate)
            let strongest = frequencies.map { spectra.inputPowerDB(atHz: Double($0)) }.max() ?? 0
            var target = [String](), measured = [String]()
            for f in frequencies.map(Double.init) {
                let goal = fitting.playedGainDB(for: ear, atHz: f)
                target.append(goal.isFinite ? String(format: "%.1f", (goal * 10).rounded() / 10) : "off")
                // Below 60 dB under the strongest band there is too little input to measure.
                guard spectra.inputPowerDB(atHz: f) > strongest - 60 else {
                    measured.append("quiet")
                    continue
                }
                let gain = spectra.gainDB(atHz: f)
                measured.append(String(format: "%.1f", gain))
                if (250...6000).contains(f), goal.isFinite { worst = max(worst, abs(gain - goal)) }
            }
            let label = ear == .left ? "left " : "right"
            print("\(label) target (dB)".padding(toLength: 20, withPad: " ", startingAt: 0) + target.map { $0.leftPadded(to: 7) }.joined())
            print(
                "\(label) measured (dB)".padding(toLength: 20, withPad: " ", startingAt: 0) + measured.map { $0.leftPadded(to: 7) }.joined()
            )
        }
        print(String(format: "worst error from 250 to 6000 Hz: %.2f dB", worst))
        if let tolerance, worst > tolerance {
            FileHandle.standardError.write(
                Data(
                    String(format: "ribbitd: measured gain is off by %.2f dB, more than the tolerance of %.2f dB\n", worst, tolerance).utf8)
            )
            throw ExitCode(1)
        }
    }
}
