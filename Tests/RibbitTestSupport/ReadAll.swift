import Foundation
import Glibc

extension FileHandle {
    /// Everything until end of file, read with `read(2)`: a call a signal interrupts is made
    /// again, and any other failure is thrown, naming it. Foundation's `readDataToEndOfFile`
    /// traps on both (a `try!` inside), and a trap ends every test in the process: stop 48's
    /// loaded run lost the whole end-to-end step to one EBADF that way.
    public func readAll() throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(fileDescriptor, &buffer, buffer.count)
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                throw TestSetupError("read from descriptor \(fileDescriptor): \(String(cString: strerror(errno)))")
            }
        }
    }
}
