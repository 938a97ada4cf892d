import Glibc

/// The GNU build ID of the running executable (lowercase hex), from its ELF notes: a new build
/// gets a new one, so a cache of what this code computed can say which code computed it. Nil
/// when the executable has none or cannot be read.
public enum BuildID {
    public static let current: String? = read(path: "/proc/self/exe")

    /// The build ID in the ELF file at `path`.
    public static func read(path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
            guard count > 0, count <= 1 << 16 else { return nil }
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? buffer : nil
        }
        // A 64-bit little-endian ELF file (the only kind ribbit is built as).
        guard let head = bytes(at: 0, count: MemoryLayout<Elf64_Ehdr>.size), head[0..<6] == [0x7F, 0x45, 0x4C, 0x46, 2, 1]
        else { return nil }
        let header = head.withUnsafeBytes { $0.loadUnaligned(as: Elf64_Ehdr.self) }
        for index in 0..<UInt64(header.e_phnum) {
            guard
                let raw = bytes(
                    at: header.e_phoff + index * UInt64(header.e_phentsize), count: MemoryLayout<Elf64_Phdr>.size)
            else { return nil }
            let segment = raw.withUnsafeBytes { $0.loadUnaligned(as: Elf64_Phdr.self) }
            guard segment.p_type == UInt32(PT_NOTE), let notes = bytes(at: segment.p_offset, count: Int(segment.p_filesz)) else {
                continue
            }
            if let id = buildID(inNotes: notes) { return id }
        }
        return nil
    }

    /// The GNU build ID among a note segment's notes: each is three 32-bit words (name size,
    /// description size, type), the name and the description, each padded to 4 bytes.
    static func buildID(inNotes notes: [UInt8]) -> String? {
        var at = 0
        while at + 12 <= notes.count {
            let word = { (k: Int) in Int(notes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at + 4 * k, as: UInt32.self) }) }
            let (nameSize, descriptionSize, type) = (word(0), word(1), word(2))
            let name = at + 12
            let description = name + (nameSize + 3) / 4 * 4
            let next = description + (descriptionSize + 3) / 4 * 4
            guard next <= notes.count else { return nil }
            if type == Int(NT_GNU_BUILD_ID), nameSize == 4, Array(notes[name..<(name + 4)]) == Array("GNU\0".utf8), descriptionSize > 0 {
                let digits = Array("0123456789abcdef")
                return String(
                    notes[description..<(description + descriptionSize)].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
            }
            at = next
        }
        return nil
    }
}
