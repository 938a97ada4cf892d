import ArgumentParser
import Foundation
import Glibc
import RibbitSettings
import RibbitSignature
import RibbitSystem

/// Passphrases for private keys: asked on the terminal (echo off, as ssh-keygen asks), or read
/// from a file for scripts. Not from an environment variable: every child process inherits
/// those, and `ps e` shows them.
enum Passphrase {
    /// Whether someone can be asked: standard input is a terminal and /dev/tty opens.
    static var canAsk: Bool {
        guard isatty(0) == 1 else { return false }
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// The first line of FILE ("-": standard input), without its line end.
    static func read(file path: String) throws(RibbitError) -> String {
        let bytes: Data
        if path == "-" {
            bytes = FileHandle.standardInput.readData(ofLength: BoundedFile.keyOrConfigMaxBytes)
        } else {
            do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
                throw .noInput("\(error); --passphrase-file takes a file whose first line is the passphrase")
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let line = String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }

    /// Asks on the terminal with echo off; nil when there is no terminal. Ctrl-C (or SIGTERM)
    /// while it waits gives the terminal its echo back and ends the command: the signals are
    /// blocked and polled, as `dump` does, so no handler has to restore anything.
    static func ask(_ prompt: String) throws(RibbitError) -> String? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var signals = sigset_t()
        var previous = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGQUIT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var saved = termios()
        let haveTermios = tcgetattr(fd, &saved) == 0
        if haveTermios {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(fd, TCSANOW, &quiet)
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var line = [UInt8]()
        var interrupted = false
        func signalled() -> Bool {
            var pending = signals
            var zero = timespec()
            return sigtimedwait(&pending, nil, &zero) > 0
        }
        reading: while line.count < 4096 {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let readable = poll(&ready, 1, 100) > 0
            // After the poll too: Ctrl-C may come with the line end typed after it.
            if signalled() {
                interrupted = true
                break
            }
            guard readable else { continue }
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = Syscall.retrying { Glibc.read(fd, &chunk, chunk.count) }
            guard count > 0 else { break }
            for byte in chunk.prefix(count) {
                if byte == 0x0A { break reading }
                line.append(byte)
            }
        }
        if haveTermios { tcsetattr(fd, TCSANOW, &saved) }
        if interrupted {
            _ = write(fd, "\n", 1)
            throw RibbitError(message: "interrupted; nothing written", exitCode: ExitCode(130))
        }
        if line.last == 0x0D { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }

    /// The key in a key file: a protected one is opened with the passphrase from `passphraseFile`,
    /// or asked for on the terminal.
    static func privateKey(_ path: String, passphraseFile: String?) throws(RibbitError) -> PrescriptionSignature.PrivateKey {
        let text = try readKeyFile(path, what: "the audiologist's NAME.key from `ribbitd rx keygen`")
        do {
            return try .open(fileText: text) {
                if let passphraseFile { return try read(file: passphraseFile) }
                if canAsk, let typed = try ask("Passphrase for \(path): ") { return typed }
                throw RibbitError.usage(
                    "\(path) is protected by a passphrase and there is no terminal to ask on; give --passphrase-file FILE; nothing written")
            }
        } catch let error as RibbitError {
            throw error
        } catch let problem as PrescriptionSignature.PrivateKey.FileProblem {
            switch problem {
            case .needsPassphrase: throw .data("\(path): an empty passphrase does not open it; nothing written")
            case .locked(let error): throw .data("\(path): \(error); nothing written")
            case .unreadable(let error): throw .data("\(path): \(error)")
            }
        } catch {
            throw .data("\(path): \(error)")
        }
    }
}
