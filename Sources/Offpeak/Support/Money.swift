import Foundation

/// Dollar amounts as people read them: small sums keep enough digits to be seen.
public enum Money {
    public static func format(_ dollars: Double) -> String {
        let magnitude = abs(dollars)
        if magnitude == 0 { return "0.00" }
        if magnitude < 0.01 { return String(format: "%.6f", dollars) }
        if magnitude < 1 { return String(format: "%.4f", dollars) }
        return String(format: "%.2f", dollars)
    }

    /// `$0.0123`, or `-$0.0123` for a negative amount (a saving that was a loss).
    static func dollars(_ amount: Double) -> String {
        amount < 0 ? "-$" + format(-amount) : "$" + format(amount)
    }
}
