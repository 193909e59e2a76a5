import ArgumentParser
import Foundation
import Offpeak
import Synchronization

extension OffpeakCommand {
    struct Dashboard: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dashboard",
            abstract:
                "Serve the workspace's page on 127.0.0.1: runs, the deferred queue, the money, the cache, the hosts.",
            discussion: """
                Read-only, no script. Each view is JSON too: /api/status.json, /api/run.json?id=RUN, \
                /api/queue.json, /api/costs.json?by=job|model|day|tag, /api/cache.json, /api/hosts.json. \
                With --listen it answers on that address, only to requests carrying the token in the \
                address it prints. Stops at SIGINT or SIGTERM.
                """)

        @Option(help: "The port to listen on (0: any free one).")
        var port = 8470

        @Option(help: "Seconds between the page's reloads (0: never).")
        var refresh = 30

        @Option(
            help: ArgumentHelp(
                "Listen on this address instead of 127.0.0.1 (0.0.0.0: every one); a token is then needed.",
                valueName: "address"))
        var listen: String?

        @Flag(help: "Open the page in the desktop's browser (xdg-open) once it is served.")
        var open = false

        @OptionGroup var common: CommonOptions

        func validate() throws {
            guard (0...65535).contains(port) else {
                throw ValidationError("--port: expected 0 to 65535, got \(port)")
            }
            guard (0...86_400).contains(refresh) else {
                throw ValidationError("--refresh: expected 0 to 86400 seconds, got \(refresh)")
            }
            if let listen, listen.isEmpty || listen.contains(where: { $0 == "/" || $0 == " " }) {
                throw ValidationError(
                    "--listen: expected an IP address such as 0.0.0.0 or 192.168.1.5, got '\(listen)'")
            }
        }

        func run() throws {
            let context = try common.context()
            let options = DashboardServer.Options(port: port, refresh: refresh, listen: listen)
            let server = DashboardServer(context: context, options: options)
            let failure = Mutex<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            Task {
                do {
                    let (open, environment) = (self.open, common.environment)
                    try await server.run { port in
                        let url = options.url(port: port)
                        FileHandle.standardOutput.write(Data("offpeak dashboard: \(url)\n".utf8))
                        guard open else { return }
                        // A page that cannot be opened is still served: say so, and go on.
                        do { try DashboardServer.openInBrowser(url, environment: environment) } catch {
                            Terminal.printError("\(error)")
                        }
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                done.signal()
            }
            done.wait()
            if let message = failure.withLock({ $0 }) {
                Terminal.printError("dashboard: \(message)")
                throw ExitCode(ExitStatus.unavailable.rawValue)
            }
        }
    }
}
