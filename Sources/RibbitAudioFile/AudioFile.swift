import CSndfile

public struct AudioFileError: Error, CustomStringConvertible {
    public let description: String
}

/// What a sound file holds.
public struct AudioFormat: Sendable, Equatable {
    public var sampleRate: Int
    public var channelCount: Int
    /// libsndfile's major format and subtype (e.g. WAV | PCM_16), kept so output matches input.
    public var formatCode: Int32

    public static func wav(sampleRate: Int, channelCount: Int, float: Bool = true) -> AudioFormat {
        AudioFormat(
            sampleRate: sampleRate, channelCount: channelCount,
            formatCode: Int32(SF_FORMAT_WAV) | Int32(float ? SF_FORMAT_FLOAT : SF_FORMAT_PCM_16))
    }

    public static func flac(sampleRate: Int, channelCount: Int) -> AudioFormat {
        AudioFormat(sampleRate: sampleRate, channelCount: channelCount, formatCode: Int32(SF_FORMAT_FLAC) | Int32(SF_FORMAT_PCM_16))
    }

    /// A short name for messages: "WAV 16-bit", "FLAC 24-bit", "OGG Vorbis", ...
    public var name: String {
        let major = formatCode & Int32(SF_FORMAT_TYPEMASK)
        let sub = formatCode & Int32(SF_FORMAT_SUBMASK)
        let containers: [Int32: String] = [
            Int32(SF_FORMAT_WAV): "WAV", Int32(SF_FORMAT_FLAC): "FLAC", Int32(SF_FORMAT_OGG): "OGG", Int32(SF_FORMAT_AIFF): "AIFF",
            Int32(SF_FORMAT_MPEG): "MPEG", Int32(SF_FORMAT_CAF): "CAF", Int32(SF_FORMAT_W64): "W64", Int32(SF_FORMAT_RF64): "RF64",
            Int32(SF_FORMAT_AU): "AU",
        ]
        let encoding: String
        switch sub {
        case Int32(SF_FORMAT_PCM_16): encoding = "16-bit"
        case Int32(SF_FORMAT_PCM_24): encoding = "24-bit"
        case Int32(SF_FORMAT_PCM_32): encoding = "32-bit"
        case Int32(SF_FORMAT_FLOAT): encoding = "float"
        case Int32(SF_FORMAT_DOUBLE): encoding = "double"
        case Int32(SF_FORMAT_VORBIS): encoding = "Vorbis"
        case Int32(SF_FORMAT_OPUS): encoding = "Opus"
        case Int32(SF_FORMAT_MPEG_LAYER_III): encoding = "layer III (MP3)"
        default: encoding = "encoded"
        }
        return "\(containers[major] ?? "audio") \(encoding)"
    }

    /// The format to write a file named `path` in: the container its extension names (as
    /// libsndfile lists them, plus .mp3, .ogg, .opus, .aif), with `input`'s encoding where that
    /// container takes it, else the first it takes of 24-bit, 16-bit, float, Vorbis, MP3. A name
    /// without an extension keeps `input`'s format.
    public static func forOutput(_ path: String, like input: AudioFormat) throws(AudioFileError) -> AudioFormat {
        guard let major = try majorFormat(forOutput: path) else { return input }
        let inputSub = input.formatCode & Int32(SF_FORMAT_SUBMASK)
        let opus = extensionOf(path) == "opus"
        let fallbacks = [SF_FORMAT_PCM_24, SF_FORMAT_PCM_16, SF_FORMAT_FLOAT, SF_FORMAT_VORBIS, SF_FORMAT_MPEG_LAYER_III].map { Int32($0) }
        let preferred = (opus ? [Int32(SF_FORMAT_OPUS)] : []) + [inputSub] + fallbacks
        for sub in preferred {
            var info = SF_INFO()
            info.samplerate = Int32(input.sampleRate)
            info.channels = Int32(input.channelCount)
            info.format = major | sub
            if sf_format_check(&info) != 0 {
                return AudioFormat(sampleRate: input.sampleRate, channelCount: input.channelCount, formatCode: major | sub)
            }
        }
        throw AudioFileError(
            description:
                "\(path): libsndfile here cannot write that format with \(input.channelCount) channels at \(input.sampleRate) Hz; use .wav or .flac"
        )
    }

    /// The container libsndfile writes for the name's extension; nil for a name without one.
    /// Throws, naming the extensions it knows, for any other (before any work is done).
    public static func majorFormat(forOutput path: String) throws(AudioFileError) -> Int32? {
        let ext = extensionOf(path)
        guard !ext.isEmpty else { return nil }
        let aliases: [String: Int32] = [
            "mp3": Int32(SF_FORMAT_MPEG), "ogg": Int32(SF_FORMAT_OGG), "opus": Int32(SF_FORMAT_OGG), "aif": Int32(SF_FORMAT_AIFF),
        ]
        if let major = aliases[ext] ?? writableContainers.first(where: { $0.ext == ext })?.major { return major }
        let known = (writableContainers.map(\.ext) + aliases.keys).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        throw AudioFileError(
            description: "\(path): no sound format is named .\(ext); name it .\(known.sorted().joined(separator: ", ."))")
    }

    /// libsndfile's containers by extension, the first of each name, headerless RAW left out
    /// (its rate and channels would be lost).
    private static let writableContainers: [(ext: String, major: Int32)] = {
        var count: Int32 = 0
        sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR_COUNT), &count, Int32(MemoryLayout<Int32>.size))
        var list = [(ext: String, major: Int32)]()
        for i in 0..<count {
            var info = SF_FORMAT_INFO()
            info.format = i
            sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            guard let ext = info.extension.map({ String(cString: $0) }), info.format != Int32(SF_FORMAT_RAW),
                !list.contains(where: { $0.ext == ext })
            else { continue }
            list.append((ext, info.format))
        }
        return list
    }()

    private static func extensionOf(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }
}

/// Reads a WAV, FLAC or other libsndfile-readable file in blocks, as floats (full scale +-1).
public final class AudioFileReader {
    public let path: String
    public let format: AudioFormat
    public let frameCount: Int
    private let file: OpaquePointer

    public init(path: String) throws(AudioFileError) {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(
                description: "\(path): cannot read it as sound (\(String(cString: sf_strerror(nil)))); give a WAV or FLAC file")
        }
        self.path = path
        self.file = file
        format = AudioFormat(sampleRate: Int(info.samplerate), channelCount: Int(info.channels), formatCode: info.format)
        frameCount = Int(info.frames)
    }

    deinit { sf_close(file) }

    /// Reads up to `frames` interleaved frames into `buffer`; returns the frames read (0 at end).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        Int(sf_readf_float(file, buffer, sf_count_t(frames)))
    }

    /// The whole file, one array per channel.
    public func readAll() -> [[Float]] {
        let channels = format.channelCount
        var interleaved = [Float](repeating: 0, count: frameCount * channels)
        let got = interleaved.withUnsafeMutableBufferPointer { read(into: $0.baseAddress!, frames: frameCount) }
        return (0..<channels).map { c in (0..<got).map { interleaved[$0 * channels + c] } }
    }
}

/// Writes interleaved float frames in a given format. libsndfile clips at full scale when
/// converting to integer formats instead of wrapping around.
public final class AudioFileWriter {
    public let path: String
    public let format: AudioFormat
    private var file: OpaquePointer?

    public init(path: String, format: AudioFormat) throws(AudioFileError) {
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelCount)
        info.format = format.formatCode
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError(description: "\(path): libsndfile cannot write \(format.name) with \(format.channelCount) channels")
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(description: "\(path): cannot create it (\(String(cString: sf_strerror(nil))))")
        }
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        self.path = path
        self.format = format
        self.file = file
    }

    deinit { if let file { sf_close(file) } }

    public func write(_ buffer: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
        guard let file else { throw AudioFileError(description: "\(path): already closed") }
        let written = Int(sf_writef_float(file, buffer, sf_count_t(frames)))
        guard written == frames else {
            throw AudioFileError(description: "\(path): write failed (\(String(cString: sf_strerror(file)))); is the disk full?")
        }
    }

    /// Writes whole channel arrays.
    public func write(channels: [[Float]]) throws(AudioFileError) {
        let frames = channels.first?.count ?? 0
        var interleaved = [Float](repeating: 0, count: frames * channels.count)
        for (c, channel) in channels.enumerated() {
            for i in 0..<frames { interleaved[i * channels.count + c] = channel[i] }
        }
        try interleaved.withUnsafeBufferPointer { (p) throws(AudioFileError) in try write(p.baseAddress!, frames: frames) }
    }

    /// Flushes and closes; errors surface here rather than being lost in deinit.
    public func close() throws(AudioFileError) {
        guard let file else { return }
        self.file = nil
        guard sf_close(file) == 0 else { throw AudioFileError(description: "\(path): closing failed; the file may be incomplete") }
    }
}
