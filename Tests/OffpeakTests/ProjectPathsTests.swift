import Foundation
import OffpeakTestSupport
import Testing

/// No path of one machine in the project (issue 47, item 6): a script's default, a doc's example or
/// a test's fixture that names the folder this checkout sits in, or this user's home, works only
/// here. Every file git tracks is read for them.
@Suite(.ownThreads) struct ProjectPathsTests {
    static let checkout = BuiltBinaries.packageRoot

    /// The paths no tracked file may hold: this checkout's, the home of whoever runs the tests (but
    /// a home of `/`), root's, and the folder the project was first built in (the last two spelled
    /// in two parts, so this file holds neither).
    static var machinePaths: [String] {
        var paths = [checkout.path + "/", "/root" + "/", "/work" + "/main"]
        if let home = ProcessInfo.processInfo.environment["HOME"], home.count > 1 {
            paths.append(home.hasSuffix("/") ? home : home + "/")
        }
        return Array(Set(paths)).sorted()
    }

    @Test func noTrackedFileNamesAPathOfThisMachine() throws {
        let listed = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/git"), ["-C", Self.checkout.path, "ls-files", "-z"],
            environment: [:])
        #expect(listed.status == 0, "\(listed.stderr)")
        let files = listed.stdout.split(separator: "\0").map(String.init)
        #expect(files.count > 100, "git lists the checkout's files")
        var found: [String] = []
        for file in files {
            guard
                let data = FileManager.default.contents(
                    atPath: Self.checkout.appendingPathComponent(file).path),
                let text = String(data: data, encoding: .utf8)
            else { continue }
            for path in Self.machinePaths where text.contains(path) {
                found.append("\(file): \(path)")
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
