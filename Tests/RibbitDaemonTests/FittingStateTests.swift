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
        #expect(state.filterChoice == .prescription(loud))
        #expect(state.filterChoice.ceilingDBFS == -6)
        state.bypassed = true
        #expect(state.filterChoice == .delay(ceilingDBFS: -6), "bypass: unprocessed, under the prescription's ceiling")
        state.paused = true
        #expect(state.output == .paused, "pause wins over bypass in what status says")
        #expect(state.filterChoice == .delay(ceilingDBFS: -6), "pause ramps the gain; the ceiling stays")
    }

    @Test func noChoiceIsAboveFullScale() {
        var state = FittingState()
        state.strictestCeilingDBFS = 6
        #expect(state.filterChoice.ceilingDBFS == 0)
        state.active = .init(prescription: Prescription(name: "Bad", environment: "x", maxOutputDBFS: 3), id: nil, signature: "unsigned")
        #expect(state.filterChoice.ceilingDBFS == 0)
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
