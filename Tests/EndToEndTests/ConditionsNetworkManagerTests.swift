import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak conditions` with a fake NetworkManager: an `nmcli` script first in `PATH`, run by the
/// built binary as it would run the real one.
@Suite(.ownThreads) struct ConditionsNetworkManagerTests {
    static let root = BuiltBinaries.packageRoot.appendingPathComponent("Tests/Fixtures/sysfs/ac-wifi").path

    static func conditions(_ nmcli: FakeNmcli, json: Bool) throws -> CommandResult {
        let workspace = try TemporaryWorkspace()
        return try workspace.offpeak(
            ["conditions", "--sysfs-root", root] + (json ? ["--json"] : []), environment: ["PATH": nmcli.path]
        )
    }

    /// The must-show: /sys says WiFi (the `ac-wifi` fixture, `wlan0` up), NetworkManager says
    /// metered (a phone's hotspot): metered, decided by NetworkManager.
    @Test func sysfsWifiThatNetworkManagerCallsMeteredIsMetered() throws {
        let nmcli = try FakeNmcli(stdout: FakeNmcli.terse([("wlan0", "yes"), ("wwan0", "unknown")]))
        let result = try Self.conditions(nmcli, json: true)
        #expect(result.status == 0, "\(result.stderr)")
        let root = Self.root
        #expect(
            result.stdout == """
                {
                  "network" : {
                    "decided_by" : "NetworkManager",
                    "interfaces" : [
                      {
                        "counts" : false,
                        "kind" : "other",
                        "metered" : false,
                        "name" : "lo",
                        "why" : "Loopback."
                      },
                      {
                        "counts" : true,
                        "kind" : "wifi",
                        "metered" : true,
                        "name" : "wlan0",
                        "why" : "Up with carrier; metered per NetworkManager (yes)."
                      },
                      {
                        "counts" : false,
                        "kind" : "wwan",
                        "metered" : true,
                        "name" : "wwan0",
                        "why" : "Operstate down; cellular, metered by default (NetworkManager: unknown)."
                      }
                    ],
                    "metered_by" : [
                      {
                        "name" : "lo",
                        "source" : "sysfs"
                      },
                      {
                        "name" : "wlan0",
                        "source" : "NetworkManager"
                      },
                      {
                        "name" : "wwan0",
                        "source" : "sysfs"
                      }
                    ],
                    "network_manager" : {
                      "command" : "nmcli --terse --fields GENERAL.DEVICE,GENERAL.METERED device show",
                      "devices" : [
                        {
                          "metered" : "yes",
                          "name" : "wlan0"
                        },
                        {
                          "metered" : "unknown",
                          "name" : "wwan0"
                        }
                      ],
                      "status" : "running",
                      "why" : "NetworkManager listed 2 devices."
                    },
                    "online" : true,
                    "unmetered" : false,
                    "why" : "Only metered interfaces are up (wlan0)."
                  },
                  "power" : {
                    "battery_low" : false,
                    "battery_percent" : 54,
                    "low_power" : false,
                    "on_ac" : true,
                    "why" : "The AC supply is online."
                  },
                  "readings" : [
                    {
                      "file" : "class/power_supply/AC/online",
                      "rule" : "A Mains supply that is online means external power.",
                      "value" : "1"
                    },
                    {
                      "file" : "class/power_supply/BAT0/status",
                      "rule" : "A system battery that is not discharging does not mean on battery.",
                      "value" : "Charging"
                    },
                    {
                      "file" : "class/power_supply/BAT0/capacity",
                      "rule" : "The charge of the system battery.",
                      "value" : "54"
                    },
                    {
                      "file" : "firmware/acpi/platform_profile",
                      "rule" : "Not low-power, quiet or cool: no low-power profile.",
                      "value" : "missing"
                    },
                    {
                      "file" : "class/net/wlan0/uevent",
                      "rule" : "DEVTYPE=wlan makes it wifi.",
                      "value" : "DEVTYPE=wlan INTERFACE=wlan0 IFINDEX=3"
                    },
                    {
                      "file" : "class/net/wlan0/operstate",
                      "rule" : "Up.",
                      "value" : "up"
                    },
                    {
                      "file" : "class/net/wlan0/carrier",
                      "rule" : "Carrier 1: the link is connected.",
                      "value" : "1"
                    },
                    {
                      "file" : "class/net/wwan0/uevent",
                      "rule" : "DEVTYPE=wwan makes it wwan.",
                      "value" : "DEVTYPE=wwan INTERFACE=wwan0 IFINDEX=4"
                    },
                    {
                      "file" : "class/net/wwan0/operstate",
                      "rule" : "Not up: the interface is not usable.",
                      "value" : "down"
                    }
                  ],
                  "sysfs_root" : "\(root)"
                }
                """ + "\n")
    }

    /// NetworkManager installed but not running: sysfs decides, and the text says so.
    @Test func networkManagerNotRunningLeavesItToSysfs() throws {
        let nmcli = try FakeNmcli(stdout: "", stderr: "Error: NetworkManager is not running.\n", status: 8)
        let result = try Self.conditions(nmcli, json: false)
        #expect(result.status == 0, "\(result.stderr)")
        let root = Self.root
        #expect(
            result.stdout == """
                Power: on AC. The AC supply is online.
                  battery: 54 % (not low)
                  low-power profile: no
                Network: online, unmetered. wlan0 is up with carrier and not metered. Decided by sysfs.
                  NetworkManager: not running. nmcli says NetworkManager is not running; sysfs decides.
                  INTERFACE  KIND   COUNTS  METERED  DECIDED BY  WHY
                  lo         other  no      no       sysfs       Loopback.
                  wlan0      wifi   yes     no       sysfs       Up with carrier; WiFi, unmetered by default.
                  wwan0      wwan   no      yes      sysfs       Operstate down; cellular, metered by default.
                Readings (under \(root)):
                  class/power_supply/AC/online = 1
                      A Mains supply that is online means external power.
                  class/power_supply/BAT0/status = Charging
                      A system battery that is not discharging does not mean on battery.
                  class/power_supply/BAT0/capacity = 54
                      The charge of the system battery.
                  firmware/acpi/platform_profile = missing
                      Not low-power, quiet or cool: no low-power profile.
                  class/net/wlan0/uevent = DEVTYPE=wlan INTERFACE=wlan0 IFINDEX=3
                      DEVTYPE=wlan makes it wifi.
                  class/net/wlan0/operstate = up
                      Up.
                  class/net/wlan0/carrier = 1
                      Carrier 1: the link is connected.
                  class/net/wwan0/uevent = DEVTYPE=wwan INTERFACE=wwan0 IFINDEX=4
                      DEVTYPE=wwan makes it wwan.
                  class/net/wwan0/operstate = down
                      Not up: the interface is not usable.
                """ + "\n")
    }
}
