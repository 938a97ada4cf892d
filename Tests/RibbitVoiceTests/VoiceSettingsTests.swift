import Testing

@testable import RibbitVoice

@Suite struct VoiceSettingsTests {
    @Test func theStandardSettingsAreUsableAndBadOnesAreNamed() {
        #expect(VoiceSettings.standard(calibrated: true).problems.isEmpty)
        #expect(VoiceSettings.standard(calibrated: false).problems.isEmpty)
        var settings = VoiceSettings.standard(calibrated: true)
        settings.tooLoudDB = 50
        settings.pitchLowHz = 400
        #expect(settings.problems.count == 2)
    }
}
