/// "15m", "90s", "2h", "1h30m" -> seconds.
func parseDuration(_ text: String) throws(RibbitError) -> Int {
    var total = 0, number = ""
    for character in text {
        if character.isNumber {
            number.append(character)
        } else if let value = Int(number), let unit = ["s": 1, "m": 60, "h": 3600, "d": 86400][String(character)] {
            total += value * unit
            number = ""
        } else {
            throw .usage("'\(text)' is not a duration; write it like 90s, 15m or 2h")
        }
    }
    guard number.isEmpty, total > 0 else { throw .usage("'\(text)' is not a duration; write it like 90s, 15m or 2h") }
    return total
}

/// Seconds as "1 h 30 min", "15 min 0 s" or "45 s".
func formatDuration(_ seconds: Int) -> String {
    seconds >= 3600
        ? "\(seconds / 3600) h \(seconds % 3600 / 60) min" : seconds >= 60 ? "\(seconds / 60) min \(seconds % 60) s" : "\(seconds) s"
}
