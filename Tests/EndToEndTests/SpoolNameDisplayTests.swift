import Foundation
import OffpeakTestSupport
import Testing

/// Spool file names with control characters as users see them (issue 21, item 6). Such a file is
/// not taken (its name is its id, and an id is printable text); it was shown with Swift's escapes
/// (`new\u{a}line.txt`) in tick's warnings, in `queue` and inside `queue --json`'s strings. Text
/// now writes `\n`, `\t`, `\x1b`; JSON holds the name itself, escaped as JSON escapes it.
@Suite(.ownThreads) struct SpoolNameDisplayTests {
    static let sysfs = SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi").path
    static let names = ["esc\u{1B}[2J.txt", "new\nline.txt", "tab\there.txt"]

    @Test func controlCharactersInNamesAreWrittenOutInTextAndEscapedAsJSONDoes() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: http://127.0.0.1:9\n")
        try workspace.write(
            "jobs/inbox.yaml", "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\nmax_tokens: 60\n")
        for name in Self.names { try workspace.write("spool/inbox/\(name)", "A question?") }

        let tick = try workspace.offpeak(["tick"], timeout: 60)
        let why = "; an id is printable text (`offpeak queue` lists it until it is gone)\n"
        #expect(tick.status == 0 && tick.stderr == "", "\(tick.stderr)")
        #expect(
            tick.stdout
                == "warning: spool/inbox/esc\\x1b[2J.txt: its name, the request's id, has a control character "
                + "U+001B at position 4" + why
                + "warning: spool/inbox/new\\nline.txt: its name, the request's id, has a control character "
                + "U+000A at position 4" + why
                + "warning: spool/inbox/tab\\there.txt: its name, the request's id, has a control character "
                + "U+0009 at position 4" + why
                + "nothing to do\n")

        let json = try workspace.offpeak(["queue", "--json", "--sysfs-root", Self.sysfs]).stdout
        let entries = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["not_taken"]
                as? [[String: Any]])
        #expect(entries.compactMap { $0["entry"] as? String } == Self.names.map { "spool/inbox/" + $0 })
        for escaped in [
            #""spool/inbox/esc\u001b[2J.txt""#, #""spool/inbox/new\nline.txt""#,
            #""spool/inbox/tab\there.txt""#,
        ] {
            #expect(json.contains(escaped), "the JSON source holds \(escaped): \(json)")
        }
        let since = try #require(entries.first?["since"] as? String)
        let queue = try workspace.offpeak(["queue", "--sysfs-root", Self.sysfs])
        let reason = "its name, the request's id, has a control character"
        #expect(
            queue.stdout == """
                now: on AC (54 %); online, unmetered (wlan0)
                deferred: nothing

                not taken from spool folders (remove them, or make them regular files):
                JOB    ENTRY                       SINCE                 WHY
                inbox  spool/inbox/esc\\x1b[2J.txt  \(since)  \(reason) U+001B at position 4; an id is printable text
                inbox  spool/inbox/new\\nline.txt   \(since)  \(reason) U+000A at position 4; an id is printable text
                inbox  spool/inbox/tab\\there.txt   \(since)  \(reason) U+0009 at position 4; an id is printable text

                """)
    }
}
