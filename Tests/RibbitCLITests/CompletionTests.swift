import Foundation
import Glibc
import RibbitTestSupport
import Testing

/// The shell completions swift-argument-parser writes for ribbitd: each shell accepts its
/// script, and in a real interactive shell (in tmux) Tab on `ribbitd use ` offers the names in
/// a history of two prescriptions, `--env` their environments, and a name with spaces picked
/// by Tab runs `use` on that prescription.
@Suite struct CompletionTests {
    let directory: URL
    let environment: [String: String]
    /// `ribbitd` on PATH, as the scripts call it.
    let bin: URL

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        var env = try TestPaths.privateHome(in: directory)
        bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent("ribbitd"), withDestinationURL: Ribbitd.binary)
        env["PATH"] = bin.path + ":/usr/bin:/bin"
        environment = env
    }

    func script(_ shell: String) throws -> URL {
        let result = try Built.run(Ribbitd.binary, ["--generate-completion-script", shell], environment: environment)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let file = directory.appendingPathComponent(shell == "zsh" ? "zsh/_ribbitd" : "ribbitd.\(shell)")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(result.stdout.utf8).write(to: file)
        return file
    }

    @Test(arguments: ["bash", "zsh", "fish"]) func scriptIsValidForItsShell(shell: String) throws {
        let program = try #require(Built.tool(shell), "\(shell) is needed (apt-get install \(shell))")
        let file = try script(shell)
        let check = try Built.run(program, ["-n", file.path])
        #expect(check.status == 0, "\(shell) -n: \(check.stderr)")
        // Prescriptions and pictures complete as files, by extension.
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains("jpeg") && text.contains("flac"), "\(shell): no file extensions in the script")
        // A broken script does fail the check (the test can fail).
        try Data((text + "\nif then fi (\n").utf8).write(to: file)
        #expect(try Built.run(program, ["-n", file.path]).status != 0)
    }

    /// The custom completion alone: what the scripts run, reading the same history as `list`.
    @Test func customCompletionGivesTheHistorysNamesAndEnvironments() throws {
        let empty = try Built.run(
            Ribbitd.binary, ["---completion", "use", "--", "positional@0", "2", "0", "ribbitd", "use", ""], environment: environment)
        #expect(empty.status == 0 && empty.stdout.isEmpty && empty.stderr.isEmpty, "\(empty)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path))
        try loadTwo()
        let names = try Built.run(
            Ribbitd.binary, ["---completion", "use", "--", "positional@0", "2", "0", "ribbitd", "use", ""], environment: environment)
        #expect(names.stdout == "Mild sloping high-frequency loss\nModerate flat loss, music\n", "\(names)")
        let environments = try Built.run(
            Ribbitd.binary, ["---completion", "use", "--", "--env", "3", "0", "ribbitd", "use", "--env", ""], environment: environment)
        #expect(environments.stdout == "quiet\nmusic\n", "\(environments)")
    }

    func loadTwo() throws {
        for sample in ["mild-presbycusis.rx", "moderate-flat-music.rx"] {
            let load = try Built.run(Ribbitd.binary, ["load", rx(sample)], environment: environment)
            #expect(load.status == 0, "\(load.stderr)")
        }
    }

    /// Each shell as a user has it, in tmux: Tab lists, Tab completes a name with spaces, Enter runs it.
    @Test(arguments: ["bash", "zsh", "fish"]) func tabCompletesUseInARealShell(shell: String) throws {
        let tmux = try #require(Built.tool("tmux"), "tmux is needed (apt-get install tmux)")
        let program = try #require(Built.tool(shell), "\(shell) is needed (apt-get install \(shell))")
        try loadTwo()
        let file = try script(shell)
        let command: String
        switch shell {
        case "bash":
            let rc = directory.appendingPathComponent("bashrc")
            try Data("source \(file.path)\nPS1='ready> '\n".utf8).write(to: rc)
            command = "\(program.path) --noprofile --rcfile \(rc.path) -i"
        case "zsh":
            let rc = directory.appendingPathComponent(".zshrc")
            let zsh = file.deletingLastPathComponent().path
            try Data("fpath=(\(zsh) $fpath)\nautoload -Uz compinit\ncompinit -u -d \(zsh)/.zcompdump\nPS1='ready> '\n".utf8).write(to: rc)
            command = "\(program.path) -i"
        default:
            command = "\(program.path) --no-config -C 'source \(file.path); function fish_prompt; echo \"ready> \"; end'"
        }
        // The shell gets only these (values without quotes), so the user's own settings play no part.
        var env = environment.filter {
            ["HOME", "PATH", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"].contains($0.key)
        }
        env["ZDOTDIR"] = directory.path
        env["TERM"] = "xterm-256color"
        env["SHELL"] = program.path
        env["LANG"] = "C.UTF-8"
        let server = ServerName.unique()  // a private tmux server, stopped by its own command
        func tmuxRun(_ arguments: [String]) throws -> RunResult { try Built.run(tmux, ["-L", server] + arguments) }
        defer { _ = try? tmuxRun(["kill-server"]) }
        let shellCommand = env.map { "\($0.key)='\($0.value)'" }.sorted().joined(separator: " ")
        let status = try Built.runLeavingDaemon(
            tmux, ["-L", server, "new-session", "-d", "-x", "120", "-y", "30", "-s", "sh", "env -i \(shellCommand) \(command)"],
            environment: ProcessInfo.processInfo.environment)
        #expect(status == 0)
        func send(_ keys: String...) throws { _ = try tmuxRun(["send-keys", "-t", "sh"] + keys) }
        /// The screen once it shows all of `texts`, or after `seconds`.
        func screen(showing texts: [String], seconds: Double = 10) throws -> String {
            let deadline = Date().addingTimeInterval(seconds)
            while true {
                let pane = try tmuxRun(["capture-pane", "-p", "-t", "sh"]).stdout
                if texts.allSatisfy(pane.contains) || Date() > deadline { return pane }
                usleep(100_000)
            }
        }
        /// Tab until the shell lists `texts`: bash lists on the Tab after one that inserted nothing
        /// (readline's rule), zsh and fish on the first that cannot insert more.
        func tabUntil(_ texts: [String]) throws -> String {
            var pane = ""
            for _ in 0..<3 {
                try send("Tab")
                pane = try screen(showing: texts, seconds: 3)
                if texts.allSatisfy(pane.contains) { break }
            }
            return pane
        }
        _ = try screen(showing: ["ready>"], seconds: 10)  // the shell is up
        try send("ribbitd use ")
        let names = try tabUntil(["Mild sloping high-frequency loss", "Moderate flat loss, music"])
        #expect(names.contains("Mild sloping high-frequency loss") && names.contains("Moderate flat loss, music"), "\(shell):\n\(names)")
        try send("C-u", "C-l", "ribbitd use --env ")
        let environments = try tabUntil(["quiet", "music"])
        #expect(environments.contains("quiet") && environments.contains("music"), "\(shell):\n\(environments)")
        // One name starts with Mi: Tab completes it, quoted for the shell, and Enter uses it.
        try send("C-u", "C-l", "ribbitd use Mi", "Tab")
        let completed = try screen(showing: ["high-frequency"])
        try send("Enter")
        let ran = try screen(showing: ["is now the active prescription"])
        #expect(
            ran.contains("Mild sloping high-frequency loss (quiet) is now the active prescription"), "\(shell):\n\(completed)\n---\n\(ran)")
        // The tmux server (and the shell in it) ends with kill-server, as it does for a user.
        let serverPID = try #require(
            pid_t(tmuxRun(["display-message", "-p", "#{pid}"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        _ = try tmuxRun(["kill-server"])
        let deadline = Date().addingTimeInterval(10)
        while kill(serverPID, 0) == 0, Date() < deadline { usleep(20_000) }
        #expect(kill(serverPID, 0) != 0, "the tmux server \(serverPID) outlived kill-server")
    }
}
