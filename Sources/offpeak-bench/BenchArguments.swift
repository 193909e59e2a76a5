import Foundation

/// The few flags the benchmarks take, parsed by hand: the bench has no dependency but the library.
struct BenchArguments {
    let command: String
    private var rest: [String]

    init(_ arguments: [String]) {
        command = arguments.first ?? ""
        rest = Array(arguments.dropFirst())
    }

    /// The value after `flag`, removed from what is left.
    mutating func string(_ flag: String) -> String? {
        guard let index = rest.firstIndex(of: flag) else { return nil }
        guard index + 1 < rest.count else { fail("\(flag) needs a value") }
        let value = rest[index + 1]
        rest.removeSubrange(index...(index + 1))
        return value
    }

    mutating func int(_ flag: String, default value: Int) -> Int {
        guard let text = string(flag) else { return value }
        guard let number = Int(text.replacingOccurrences(of: "_", with: "")), number > 0 else {
            fail("\(flag) wants a positive whole number, not '\(text)'")
        }
        return number
    }

    /// What is left: the positional arguments. A leftover flag is a usage error.
    func remaining() -> [String] {
        if let flag = rest.first(where: { $0.hasPrefix("--") }) { fail("unknown option \(flag)") }
        return rest
    }

    func expectNoMore() {
        if !remaining().isEmpty { fail("unexpected arguments: \(rest.joined(separator: " "))") }
    }
}
