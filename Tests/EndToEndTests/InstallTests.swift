import Foundation
import OffpeakTestSupport
import Testing

/// offpeak installs like a Linux tool: `--version`, and `make install` / `make uninstall` with the
/// built binaries (`INSTALL_FROM`, the debug build: a release build takes minutes) into a
/// temporary `DESTDIR`.
@Suite(.ownThreads) struct InstallTests {
    static let version = "0.14.0"

    @Test func versionPrintsExactlyTheVersion() throws {
        let result = try CommandResult.run(BuiltBinaries.offpeak, ["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == Self.version + "\n")
        #expect(result.stderr == "")
    }

    @Test func installPutsEachFileWhereDebianLooksAndUninstallRemovesThem() throws {
        let destdir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-destdir-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: destdir) }
        let make = URL(fileURLWithPath: "/usr/bin/make")
        let variables = ["DESTDIR=\(destdir.path)", "PREFIX=/usr"]
        let install = try CommandResult.run(
            make, ["install", "INSTALL_FROM=\(BuiltBinaries.directory.path)"] + variables,
            in: BuiltBinaries.packageRoot)
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")

        let root = destdir.appendingPathComponent("usr")
        #expect(
            Self.files(under: destdir) == [
                "usr/bin/offpeak", "usr/bin/offpeak-sim", "usr/share/bash-completion/completions/offpeak",
                "usr/share/fish/vendor_completions.d/offpeak.fish", "usr/share/man/man1/offpeak.1",
                "usr/share/zsh/site-functions/_offpeak",
            ])
        let installed = try CommandResult.run(root.appendingPathComponent("bin/offpeak"), ["--version"])
        #expect(installed.stdout == Self.version + "\n")
        #expect(
            FileManager.default.isExecutableFile(atPath: root.appendingPathComponent("bin/offpeak-sim").path))
        let read = { (path: String) in
            (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? ""
        }
        #expect(
            read("share/bash-completion/completions/offpeak").contains(
                "complete -o filenames -F _offpeak offpeak"))
        #expect(read("share/zsh/site-functions/_offpeak").hasPrefix("#compdef offpeak"))
        #expect(read("share/fish/vendor_completions.d/offpeak.fish").contains("complete -c 'offpeak'"))
        let manual = read("share/man/man1/offpeak.1")
        #expect(manual.contains(".Dt OFFPEAK 1"))
        #expect(manual.contains(".It Em conditions"), "every subcommand is in the page")

        let uninstall = try CommandResult.run(make, ["uninstall"] + variables, in: BuiltBinaries.packageRoot)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Self.files(under: destdir) == [])
    }

    /// Every regular file under `folder`, relative, sorted.
    static func files(under folder: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = folder.appendingPathComponent(path).path
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue
            {
                files.append(path)
            }
        }
        return files.sorted()
    }
}
