import RibbitSettings
import Testing

@Suite struct DaemonConfigTests {
    @Test func readsEveryKey() throws {
        let config = try DaemonConfig.parse(
            """
            # ribbitd.conf
            input = ["system:capture_1", "system:capture_2"]
            output = "system:playback_1"
            connect = false
            client-name = "ribbit-left"
            log-level = "debug"
            """, path: "ribbitd.conf")
        #expect(config.inputs == ["system:capture_1", "system:capture_2"])
        #expect(config.outputs == ["system:playback_1"])
        #expect(config.connect == false)
        #expect(config.clientName == "ribbit-left")
        #expect(config.logLevel == "debug")
        #expect(try DaemonConfig.parse("", path: "empty") == DaemonConfig())
    }

    @Test(arguments: [
        ("inptu = \"a:b\"", "c:1: unknown key `inptu`; known: input, output, connect, client-name, log-level, require-signed"),
        ("input", "c:1: expected `key = value`, got `input`"),
        ("connect = yes", "c:1: connect must be true or false"),
        ("input = system:capture_1", "c:1: expected a \"quoted string\", got `system:capture_1`"),
        ("input = \"a:1,b:2,c:3\"", "c:1: give one or two JACK ports as client:port (left, then right); `ribbitd ports` lists them"),
        ("input = [\"a:1\"", "c:1: a list must end with ]"),
        ("output = \"nocolon\"", "c:1: give one or two JACK ports as client:port (left, then right); `ribbitd ports` lists them"),
    ])
    func refusesMistakesWithTheirLine(text: String, message: String) {
        #expect(throws: ConfigError.self) { try DaemonConfig.parse(text, path: "c") }
        do {
            _ = try DaemonConfig.parse(text, path: "c")
        } catch {
            #expect(error.description == message)
        }
    }
}
