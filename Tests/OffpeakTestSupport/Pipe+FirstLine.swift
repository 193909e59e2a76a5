import Foundation

extension Pipe {
    /// What the process writing to this pipe has printed up to its first newline, or within
    /// `seconds` (or until it closes the pipe): how a test learns the port a server it started took.
    public func firstLine(within seconds: TimeInterval = 30) -> String {
        var buffer = Data()
        let deadline = Date() + seconds
        while !buffer.contains(UInt8(ascii: "\n")), Date() < deadline {
            let chunk = fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
        }
        return String(decoding: buffer, as: UTF8.self)
    }
}
