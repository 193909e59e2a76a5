import Foundation

/// Looking at the cache without touching it, for `offpeak estimate`.
extension ResponseCache {
    /// The fresh answer a run would find for `key` (`answer(for:)`), without counting a hit or a
    /// miss, bumping the entry or evicting a corrupt one: an estimate writes nothing. A payload
    /// that cannot be read is nil, as the run would find it; `unchanged` as `answers(for:unchanged:)`.
    func peekAnswer(for key: String, unchanged: Bool = false, now: Date = Date()) throws(OffpeakError)
        -> CachedAnswer?
    {
        let found = try lookup(key, now: now) { payload, fresh in
            fresh || unchanged
                ? Result { () throws(CachePayload.Failure) in
                    try CachePayload.decodeAnswer(from: payload)
                } : nil
        }
        guard case (.success(let answer), _)? = found else { return nil }
        return answer
    }
}
