/// Keys that announce themselves by a vendor's prefix (`sk-ant-…`, `ghp_…`, `AKIA…`, a JWT's
/// `eyJ…`), recognized without knowing the value.
///
/// A prefix counts only at the start of a word, with a random-looking body after it (a digit or
/// a capital, or 32 characters): `task-scheduler`, `sk-learn-compatible` and `hf_hub_download`
/// are words, not keys.
extension CredentialScan {
    struct PrefixRule {
        var prefix: [UInt8]
        /// Characters after the prefix, at least.
        var minimumBody: Int
        /// The body may hold dots (`ya29.…`, a JWT's three parts).
        var dots = false
    }

    static let prefixRules: [PrefixRule] = {
        var rules = [
            ("sk-", 8), ("sk_", 12), ("rk_live_", 10), ("rk_test_", 10), ("github_pat_", 20), ("glpat-", 16),
            ("AKIA", 16), ("ASIA", 16), ("AIza", 30), ("gsk_", 20), ("hf_", 20), ("xai-", 20),
            ("pplx-", 20), ("nvapi-", 20), ("r8_", 20), ("csk-", 20), ("npm_", 30), ("pypi-", 30),
            ("dop_v1_", 30), ("shpat_", 20), ("sq0atp-", 20), ("xapp-", 10),
        ].map { PrefixRule(prefix: Array($0.0.utf8), minimumBody: $0.1) }
        rules += ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].map {
            PrefixRule(prefix: Array($0.utf8), minimumBody: 20)
        }
        rules += ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-"].map {
            PrefixRule(prefix: Array($0.utf8), minimumBody: 10)
        }
        rules += [
            PrefixRule(prefix: Array("ya29.".utf8), minimumBody: 20, dots: true),
            PrefixRule(prefix: Array("SG.".utf8), minimumBody: 20, dots: true),
            PrefixRule(prefix: Array("eyJ".utf8), minimumBody: 20, dots: true),
        ]
        return rules
    }()

    /// Rule indices by the prefix's first byte.
    static let prefixRulesByFirstByte: [[Int]] = {
        var table = [[Int]](repeating: [], count: 256)
        for (index, rule) in prefixRules.enumerated() { table[Int(rule.prefix[0])].append(index) }
        return table
    }()

    /// A key with a known prefix, starting at a word boundary: the whole token.
    mutating func prefixedToken(at index: Int) -> Range<Int>? {
        for ruleIndex in Self.prefixRulesByFirstByte[Int(bytes[index])]
        where index >= prefixFailedUntil[ruleIndex] {
            let rule = Self.prefixRules[ruleIndex]
            guard bytes.count - index > rule.prefix.count,
                rule.prefix.indices.allSatisfy({ bytes[index + $0] == rule.prefix[$0] })
            else { continue }
            var end = index + rule.prefix.count
            var digits = 0
            var capitals = 0
            var dots = 0
            while end < bytes.count {
                let byte = bytes[end]
                if Self.isDigit(byte) {
                    digits += 1
                } else if Self.isUpper(byte) {
                    capitals += 1
                } else if byte == UInt8(ascii: ".") && rule.dots {
                    dots += 1
                } else if !Self.isIdentifier(byte) {
                    break
                }
                end += 1
            }
            while rule.dots, end > index, bytes[end - 1] == UInt8(ascii: ".") {
                end -= 1
                dots -= 1
            }
            let body = end - index - rule.prefix.count
            let isJWT = rule.prefix.first == UInt8(ascii: "e")
            if body >= rule.minimumBody, digits + capitals > 0 || body >= 32, !isJWT || dots >= 2 {
                return index..<end
            }
            prefixFailedUntil[ruleIndex] = end
        }
        return nil
    }

}
