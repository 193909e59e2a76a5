/// Provider batches in `/sim/stats`, beside the live counters (which they never change): the
/// tokens their answers billed and what became of their requests.
public struct ProviderBatchStats: Sendable, Equatable, Codable {
    /// Counts of batches and of their requests' ends.
    public struct Counts: Sendable, Equatable, Codable {
        public var created = 0
        public var ended = 0
        public var succeeded = 0
        public var errored = 0
        public var expired = 0
        public var canceled = 0
        /// Batch prices are half the live prices, so a batch answer costs half its live twin.
        public var priceFactor = 0.5

        public init() {}

        enum CodingKeys: String, CodingKey {
            case created, ended, succeeded, errored, expired, canceled
            case priceFactor = "price_factor"
        }
    }

    /// Tokens of provider-batch answers (`/v1/messages/batches`, `/v1/batches`), billed once
    /// when their batch ends, at half the live price; never part of `billed`.
    public var billedBatch = BilledTokens()
    public var batches = Counts()

    public init() {}

    enum CodingKeys: String, CodingKey {
        case billedBatch = "billed_batch"
        case batches
    }
}
