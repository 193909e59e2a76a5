import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Metered networks from NetworkManager: a fake `nmcli` first in `PATH`, run by the real
/// `NetworkManagerSource` (a real process), with sysfs as the base and the fallback.
@Suite(.ownThreads) struct NetworkManagerTests {
    /// A laptop on WiFi (`wlan0` up with carrier), as sysfs sees it: unmetered.
    static func wifiLaptop() throws -> FakeSysfs {
        let fs = try FakeSysfs()
        try fs.interface("wlan0", devtype: "wlan")
        try fs.interface("wwan0", operstate: "down", carrier: nil, devtype: "wwan")
        return fs
    }

    static func read(
        _ fs: FakeSysfs, _ nmcli: FakeNmcli?, metered: [String] = [], unmetered: [String] = [],
        timeout: TimeInterval = NetworkManagerSource.defaultTimeout
    ) -> MachineConditions {
        let path = nmcli?.path ?? "/nonexistent-offpeak-test"
        let source = NetworkManagerSource(environment: ["PATH": path], timeout: timeout)
        return MachineConditions.read(
            sysfsRoot: fs.root, metered: metered, unmetered: unmetered, networkManager: source)
    }

    @Test func wifiThatNetworkManagerCallsMeteredIsMetered() throws {
        let fs = try Self.wifiLaptop()
        #expect(Self.read(fs, nil).network.unmetered, "sysfs alone says unmetered WiFi")
        let nmcli = try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "yes"), ("wwan0", "unknown")]))
        let network = Self.read(fs, nmcli).network
        #expect(network.online && !network.unmetered)
        #expect(network.decidedBy == .networkManager)
        #expect(network.networkManager?.status == .running)
        let wlan = try #require(network.interfaces.first { $0.name == "wlan0" })
        #expect(wlan.metered && wlan.meteredBy == .networkManager)
        #expect(wlan.why == "Up with carrier; metered per NetworkManager (yes).")
    }

    @Test func guessYesCountsAsMeteredAndGuessNoOrUnknownLeaveItToSysfs() throws {
        let fs = try Self.wifiLaptop()
        let guessYes = Self.read(fs, try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "yes (guessed)")])))
        #expect(!guessYes.network.unmetered && guessYes.network.decidedBy == .networkManager)
        #expect(guessYes.network.networkManager?.metered("wlan0") == .guessYes)
        for word in ["no (guessed)", "unknown"] {
            let network = Self.read(fs, try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", word)]))).network
            #expect(
                network.unmetered && network.decidedBy == .sysfs,
                "\(word): \(network.networkManager?.why ?? "")")
            #expect(network.interfaces.first { $0.name == "wlan0" }?.why.contains("NetworkManager:") == true)
        }
        // A firm "no" from NetworkManager (the user said so there) makes even a modem unmetered.
        let modem = try FakeSysfs()
        try modem.interface("wwan0", devtype: "wwan")
        #expect(!Self.read(modem, nil).network.unmetered)
        let no = Self.read(modem, try FakeNmcli(stdout: FakeNmcli.terse([("wwan0", "no")]))).network
        #expect(no.unmetered && no.decidedBy == .networkManager)
    }

    @Test func theWorkspaceListsStillWin() throws {
        let fs = try Self.wifiLaptop()
        let nmcli = try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "yes")]))
        let network = Self.read(fs, nmcli, unmetered: ["wlan*"]).network
        #expect(network.unmetered && network.decidedBy == .workspace)
        let metered = Self.read(
            fs, try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "no")])), metered: ["wlan0"])
        #expect(!metered.network.unmetered && metered.network.decidedBy == .workspace)
    }

    @Test func withoutNmcliSysfsDecides() throws {
        let fs = try Self.wifiLaptop()
        let network = Self.read(fs, nil).network
        #expect(network.networkManager?.status == .absent)
        #expect(network.unmetered && network.decidedBy == .sysfs)
        #expect(MachineConditions.read(sysfsRoot: fs.root).network.networkManager == nil)
    }

    /// `OFFPEAK_NMCLI` names the nmcli to ask, over `PATH`; set empty, NetworkManager is not
    /// asked, even with an nmcli on `PATH` (the tests' binaries run so on a machine where it runs).
    @Test func offpeakNmcliNamesTheProgramOrKeepsNetworkManagerOut() throws {
        let fs = try Self.wifiLaptop()
        let nmcli = try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "yes")]))
        let program = nmcli.folder.appendingPathComponent("nmcli").path
        let named = NetworkManagerSource(environment: [
            "PATH": "/usr/bin:/bin", "OFFPEAK_NMCLI": program,
        ])
        let network = MachineConditions.read(sysfsRoot: fs.root, networkManager: named).network
        #expect(network.decidedBy == .networkManager && !network.unmetered)

        let off = NetworkManagerSource(environment: ["PATH": nmcli.path, "OFFPEAK_NMCLI": ""])
        let answer = MachineConditions.read(sysfsRoot: fs.root, networkManager: off).network
        #expect(answer.networkManager?.status == .absent)
        #expect(
            answer.networkManager?.why
                == "OFFPEAK_NMCLI is empty, so NetworkManager is not asked; sysfs decides.")
        #expect(answer.unmetered && answer.decidedBy == .sysfs)
    }

    @Test func networkManagerNotRunning() throws {
        let fs = try Self.wifiLaptop()
        let nmcli = try FakeNmcli(stdout: "", stderr: "Error: NetworkManager is not running.\n", status: 8)
        let network = Self.read(fs, nmcli).network
        #expect(network.networkManager?.status == .notRunning)
        #expect(network.unmetered && network.decidedBy == .sysfs)
    }

    @Test func garbageAndFailuresFallBackToSysfs() throws {
        let fs = try Self.wifiLaptop()
        let answers: [(FakeNmcli, String)] = [
            (try FakeNmcli(stdout: "\u{1}\u{2}garbage\nwlan0 metered\n:::\n"), "nothing offpeak understood"),
            (try FakeNmcli(stdout: String(repeating: "y", count: 600_000)), "nothing offpeak understood"),
            (
                try FakeNmcli(
                    stdout: "", stderr: "Error: access denied sk-ant-api03-AbCdEf0123456789xyz\n", status: 1),
                "exited with status 1: Error: access denied [redacted]"
            ),
        ]
        for (nmcli, why) in answers {
            let network = Self.read(fs, nmcli).network
            #expect(network.networkManager?.status == .failed)
            #expect(network.networkManager?.why.contains(why) == true, "\(network.networkManager?.why ?? "")")
            #expect(network.unmetered && network.decidedBy == .sysfs)
        }
        // Lines it cannot read are skipped; the ones it can still count.
        let partly = try FakeNmcli(
            stdout:
                "GENERAL.DEVICE:wlan0\nGENERAL.METERED:maybe\nnonsense\n\nGENERAL.DEVICE:eth0\nGENERAL.METERED:yes\n"
        )
        let answer = try #require(Self.read(fs, partly).network.networkManager)
        #expect(answer.status == .running)
        #expect(
            answer.devices == [.init(name: "wlan0", metered: .unknown), .init(name: "eth0", metered: .yes)])
        #expect(answer.why == "NetworkManager listed 2 devices (2 lines not understood were skipped).")
    }

    /// nmcli hanging (a stuck D-Bus) costs at most the timeout. The fake sleeps 30 s; with a 1 s
    /// timeout the answer comes in about 1 s (measured 1.15 s), bounded here at 15 s.
    @Test func aSlowNmcliIsStopped() throws {
        let fs = try Self.wifiLaptop()
        let nmcli = try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "yes")]), sleepSeconds: 30)
        let started = Date()
        let network = Self.read(fs, nmcli, timeout: 1).network
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(network.networkManager?.status == .failed)
        #expect(
            network.networkManager?.why == "nmcli did not answer within 1 s and was stopped; sysfs decides.")
        #expect(network.unmetered && network.decidedBy == .sysfs)
    }

    @Test func anAnswerIsReusedForAFewSeconds() throws {
        let nmcli = try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "yes")]))
        let source = NetworkManagerSource(environment: ["PATH": nmcli.path])
        let now = Date()
        #expect(source.read(now: now).metered("wlan0") == .yes)
        try Data(FakeNmcli.terse([("wlan0", "no")]).utf8).write(
            to: nmcli.folder.appendingPathComponent("stdout"))
        #expect(source.read(now: now + 5).metered("wlan0") == .yes, "reused within 10 s")
        #expect(source.read(now: now + 11).metered("wlan0") == .no, "asked again after")
    }

    @Test func terseParsing() {
        let parsed = NetworkManagerAnswer.parse(
            "GENERAL.DEVICE:eth0\\:1\nGENERAL.METERED:no (guessed)\n\nGENERAL.DEVICE:br\\\\0\n\nGENERAL.DEVICE:\n"
        )
        #expect(
            parsed.devices == [
                .init(name: "eth0:1", metered: .guessNo), .init(name: "br\\0", metered: .unknown),
            ])
        #expect(parsed.skipped == 1, "the empty device name")
        #expect(
            NetworkManagerAnswer.parse("GENERAL.METERED:yes\n").skipped == 1,
            "a metered line before any device")
        #expect(NetworkManagerAnswer.Metered(nmcli: "guess-yes") == .guessYes)
    }
}
