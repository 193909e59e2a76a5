import Foundation

/// The limits of one provider that every process on the store holds together: those the user set in
/// `offpeak.yaml` (`limits: {PROVIDER: {...}}`). A default (8 calls in flight) stays each process's
/// own: it is a guess about what suits one client, not an allowance the user was given.
///
/// Calls count against the provider named by `key`: its kind and base URL, so two workspaces that
/// send to different servers never share an allowance.
struct SharedLimits: Sendable, Equatable {
    let key: String
    var requestsPerMinute: Int?
    var tokensPerMinute: Int?
    var inFlight: Int?

    /// The limits `limits` sets for calls of `provider` to `baseURL`; nil when it sets none.
    init?(_ limits: ProviderLimits, provider: ProviderKind, baseURL: String) {
        guard limits.requestsPerMinute != nil || limits.tokensPerMinute != nil || limits.inFlight != nil
        else {
            return nil
        }
        self.init(
            key: "\(provider.rawValue) \(baseURL)", requestsPerMinute: limits.requestsPerMinute,
            tokensPerMinute: limits.tokensPerMinute, inFlight: limits.inFlight)
    }

    init(key: String, requestsPerMinute: Int? = nil, tokensPerMinute: Int? = nil, inFlight: Int? = nil) {
        self.key = key
        self.requestsPerMinute = requestsPerMinute
        self.tokensPerMinute = tokensPerMinute
        self.inFlight = inFlight
    }
}

/// What a process asks of the shared limits (`SharedLimitBook.take`): a grant of `requests`
/// requests and `tokens` tokens, to be sent by `sendBy`, and a call's slot when `inFlight` is shared.
struct LimitAsk: Sendable, Equatable {
    var limits: SharedLimits
    /// The process asking (`ProcessOwner`) and its host (`HostName`).
    var owner: String
    var host: String
    /// Requests wanted; fewer may be granted, never none.
    var requests: Int
    /// Tokens wanted; fewer may be granted, never fewer than `needed`.
    var tokens: Int
    /// The tokens of the call that asks (input and output, estimated).
    var needed: Int
    /// Whether the grant holds one call's slot (`inFlight` is shared): one request then.
    var slot: Bool
    /// The last moment the grant's requests may be sent.
    var sendBy: Date
    /// How long a slot is held by an owner that is not heard from (killed on another host).
    var slotTTL: TimeInterval
}

/// A grant: its row in the store, and what it allows.
struct LimitGrant: Sendable, Equatable {
    let id: Int64
    let requests: Int
    let tokens: Int
    let sendBy: Date
}

/// What the shared limits answered an ask.
enum LimitAnswer: Sendable, Equatable {
    case granted(LimitGrant)
    case wait(until: Date, because: CallLimiter.WaitReason)
}

/// A change to a grant the process holds, sent with its next ask or its `settle`: requests and
/// tokens it did not use (negative) or that retries and answers used beyond the estimate, a slot
/// given back (`slots: -1`), or the grant's last send, earlier than asked for.
struct LimitChange: Sendable, Equatable {
    let grant: Int64
    var requests = 0
    var tokens = 0
    var slots = 0
    var sentBy: Date?

    /// `changes` with one change per grant, in the order their grants first came: a statement that
    /// updates rows from a list of changes applies one per row.
    static func merged(_ changes: [LimitChange]) -> [LimitChange] {
        var order: [Int64] = []
        var byGrant: [Int64: LimitChange] = [:]
        for change in changes {
            guard var merged = byGrant[change.grant] else {
                order.append(change.grant)
                byGrant[change.grant] = change
                continue
            }
            merged.requests += change.requests
            merged.tokens += change.tokens
            merged.slots += change.slots
            merged.sentBy = [merged.sentBy, change.sentBy].compactMap { $0 }.min()
            byGrant[change.grant] = merged
        }
        return order.compactMap { byGrant[$0] }
    }
}

/// The store's side of the shared limits (`LimitStore`): grants are checked and made one at a
/// time across every process on the store, and changes to them are applied first.
protocol SharedLimitBook: AnyObject, Sendable {
    /// Applies `changes`, then grants `ask` if the limits allow it now, or says until when to wait.
    func take(_ ask: LimitAsk, settling changes: [LimitChange], now: Date) throws(OffpeakError) -> LimitAnswer

    /// Applies `changes`.
    func settle(_ changes: [LimitChange], now: Date) throws(OffpeakError)
}
