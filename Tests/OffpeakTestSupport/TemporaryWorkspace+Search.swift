import Foundation

extension TemporaryWorkspace {
    /// The workspace files (relative paths) whose bytes contain `text`: every file under the root,
    /// hidden ones, the store (`cache/offpeak.sqlite`, its `-wal` and `-shm`) and the outputs included.
    public func files(containing text: String) throws -> [String] {
        let needle = Data(text.utf8)
        guard
            let walker = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [])
        else { return [] }
        var found: [String] = []
        for case let url as URL in walker {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            if try Data(contentsOf: url).range(of: needle) != nil {
                found.append(String(url.path.dropFirst(root.path.count + 1)))
            }
        }
        return found.sorted()
    }
}
