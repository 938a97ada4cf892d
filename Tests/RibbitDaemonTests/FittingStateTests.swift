import RibbitDSP
import RibbitFitting
import RibbitPrescription
import Testing

@testable import RibbitDaemon

/// The fitting state machine on its own: no JACK, no socket, no store.
@Suite struct FittingStateTests {
    let loud = Prescription(name: "Loud", environment: "noisy", thresholds: [.left: [1000: 60], .right: [1000: 60]], maxOutputDBFS: -6)

    @Test func everyModeHasACeilingAndBypassKeepsThePrescriptionsOwn() {
        var state = FittingState()
        #expect(state.filterChoice == .delay(ceilingDBFS: Prescription.defaultMaxOutputDBFS))
        state.strictestCeilingDBFS = -12
        #expect(state.filterChoice == .delay(ceilingDBFS: -12), "no prescription: the strictest ceiling in the history")
        state.active = .init(prescription: loud, id: 3, signature: "unsigned")
        #expect(state.filterChoice == .prescription(loud, trusted: false, program: .noisy, adaptive: true), "env noisy: the noisy program")
        state.testBox = true
        #expect(
            state.filterChoice == .prescription(loud, trusted: false, program: .noisy, adaptive: false),
            "a live measurement: adaptive features off")
        state.testBox = false
        #expect(state.filterChoice.ceilingDBFS(calibration: .uncalibrated) == -6)
        state.bypassed = true
        #expect(state.filterChoice == .delay(ceilingDBFS: -6), "bypass: unprocessed, under the prescription's ceiling")
        state.paused = true
        #expect(state.output == .paused, "pause wins over bypass in what status says")
        #expect(state.filterChoice == .delay(ceilingDBFS: -6), "pause ramps the gain; the ceiling stays")
    }

    @Test func noChoiceIsAboveFullScale() {
        var state = FittingState()
        state.strictestCeilingDBFS = 6
        #expect(state.filterChoice.ceilingDBFS(calibration: .uncalibrated) == 0)
        state.active = .init(prescription: Prescription(name: "Bad", environment: "x", maxOutputDBFS: 3), id: nil, signature: "unsigned")
        #expect(state.filterChoice.ceilingDBFS(calibration: .uncalibrated) == 0)
    }

    /// The output limit in dB SPL is a sample ceiling through the calibration: a sine peaking
    /// at the ceiling plays exactly at the limit. Loud headphones (0 dBFS = 125 dB SPL) bring
    /// the ceiling down in every mode; a trusted audiologist's higher `limit:` lifts it, an
    /// unsigned one cannot.
    @Test func theOutputLimitInDBSPLBecomesTheCeilingThroughTheCalibration() throws {
        let loudPhones = Calibration(inputDBSPLAtFullScale: 100, outputDBSPLAtFullScale: [125, 119])
        var state = FittingState()
        #expect(state.filterChoice.ceilingDBFS(calibration: loudPhones) == CompressorFitting.otcLimitDBSPL - 125, "no prescription: OTC")
        var rx = Prescription(name: "Strong", environment: "quiet", thresholds: [.left: [1000: 70], .right: [1000: 70]], maxOutputDBFS: -1)
        rx.version = 2
        rx.limitDBSPL = 121
        state.active = .init(prescription: rx, id: 1, signature: "unsigned")
        #expect(state.filterChoice.ceilingDBFS(calibration: loudPhones) == 111 - 125, "unsigned: OTC caps its limit")
        state.active = .init(prescription: rx, id: 1, signature: "signed by Dr. A (trusted)", trusted: true)
        #expect(state.filterChoice.ceilingDBFS(calibration: loudPhones) == 121 - 125, "trusted: its own limit")
        #expect(state.filterChoice.ceilingDBFS(calibration: .uncalibrated) == -1, "quiet phones: the max-output holds")
        state.bypassed = true
        #expect(state.filterChoice.ceilingDBFS(calibration: loudPhones) == 111 - 125, "bypass: under the OTC limit too")
    }

    @Test func aTrialIsOverAtItsDeadline() {
        var state = FittingState()
        #expect(!state.trialIsOver(at: 1e12), "no trial, nothing to end")
        state.trial = .init(deadline: 1000, revertsTo: "Quiet")
        #expect(!state.trialIsOver(at: 999.9))
        #expect(state.trialIsOver(at: 1000))
    }

    @Test func statusLineSaysWhatPlaysAndWhetherJackIsThere() {
        var state = FittingState()
        #expect(state.statusLine(connected: false) == "processing, no prescription (unchanged sound), waiting for JACK")
        state.active = .init(prescription: loud, id: 1, signature: "signed by Dr. A (trusted)")
        state.bypassed = true
        #expect(state.statusLine(connected: true) == "bypassed: Loud (noisy)")
        #expect(state.description?.signature == "signed by Dr. A (trusted)")
        #expect(state.description?.id == 1)
    }
}
