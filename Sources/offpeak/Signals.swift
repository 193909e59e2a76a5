import Dispatch
import Foundation
import Offpeak

#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM, SIGINT and SIGHUP while work runs: stop starting calls, give calls in flight `grace`
/// seconds, then abort them; the run checkpoints and the process exits 75. A second signal aborts at
/// once. SIGHUP is what a closing SSH session or terminal sends: left to its default it killed the
/// process mid-call and left the run `running` until its lease expired. Its terminal is gone by then,
/// so what the CLI prints must not fail hard on it (`Terminal.writeError` gives up on a failed
/// write).
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func stopOnTermination(grace: TimeInterval) -> StopSignal {
        let stop = StopSignal()
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if stop.isRequested {
                    stop.request(name, grace: 0)
                    return
                }
                Terminal.printError(
                    "\(name): no new calls; waiting up to \(Int(grace)) s for calls in flight, then stopping")
                stop.request(name, grace: grace)
            }
            source.resume()
            sources.append(source)
        }
        return stop
    }
}
