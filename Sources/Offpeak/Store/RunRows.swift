import Foundation

/// Runs as a list read them: the rows that decode, and the ones that do not, named.
struct RunRows: Sendable {
    var runs: [RunRecord] = []
    var unreadable: [UnreadableRun] = []
}
