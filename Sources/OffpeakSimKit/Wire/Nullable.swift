/// A field that the APIs always send, as `null` when empty (`stop_sequence`, `refusal`, ...).
///
/// Synthesized `Encodable` leaves a nil optional out; the SDKs' models tolerate that, but the
/// sim's answers should look like the real ones, so these fields are written explicitly.
struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
    var value: Value?

    init(_ value: Value?) {
        self.value = value
    }

    static var null: Self { Self(nil) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value {
            try container.encode(value)
        } else {
            try container.encodeNil()
        }
    }
}
