/// What the data log says of the wearer's days (`ribbitd log`), for the report's section "What
/// the wearer's days sound like": the caller reads the log, this only carries and sums it.
public struct WearSummary: Codable, Sendable, Equatable {
    /// The first and last day logged (YYYY-MM-DD) and how many days have entries.
    public var firstDay: String
    public var lastDay: String
    public var days: Int
    /// Hours processing by program name, bypassed, paused, and with noise reduction on.
    public var processingHours: [String: Double]
    public var bypassedHours: Double
    public var pausedHours: Double
    public var noiseReductionHours: Double
    /// Seconds of input by 5 dB bin (lower edge, dB SPL through the calibration).
    public var levelSeconds: [Int: Int]
    public var programSwitches: Int
    public var volumeChanges: Int
    public var xruns: Int
    public var starts: Int

    public init(
        firstDay: String, lastDay: String, days: Int, processingHours: [String: Double], bypassedHours: Double, pausedHours: Double,
        noiseReductionHours: Double, levelSeconds: [Int: Int], programSwitches: Int, volumeChanges: Int, xruns: Int, starts: Int
    ) {
        self.firstDay = firstDay
        self.lastDay = lastDay
        self.days = days
        self.processingHours = processingHours
        self.bypassedHours = bypassedHours
        self.pausedHours = pausedHours
        self.noiseReductionHours = noiseReductionHours
        self.levelSeconds = levelSeconds
        self.programSwitches = programSwitches
        self.volumeChanges = volumeChanges
        self.xruns = xruns
        self.starts = starts
    }

    /// Hours worn: processing, bypassed and paused.
    public var wornHours: Double { processingHours.values.reduce(0, +) + bypassedHours + pausedHours }

    /// The level at or below which `fraction` of the logged seconds lie (the bin's upper edge).
    public func level(percentile fraction: Double) -> Int? {
        let total = levelSeconds.values.reduce(0, +)
        guard total > 0 else { return nil }
        var seen = 0
        for bin in levelSeconds.keys.sorted() {
            seen += levelSeconds[bin]!
            if Double(seen) >= fraction * Double(total) { return bin + 5 }
        }
        return nil
    }
}
