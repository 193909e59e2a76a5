/// Counts as people write them: "1 item", "2 items", "0 items".
enum Plural {
    /// - Parameter plural: the plural when it is not `singular` + "s".
    static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }
}
