/// Message or system content as both APIs accept it: a string, or an array of content blocks.
enum TextContent: Decodable, Sendable, Equatable {
    case string(String)
    case blocks([ContentBlock])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .string(text)
            return
        }
        do {
            self = .blocks(try container.decode([ContentBlock].self))
        } catch DecodingError.typeMismatch(_, let context)
            where context.codingPath.count == decoder.codingPath.count
        {
            throw DecodingError.typeMismatch(
                [ContentBlock].self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "expected a string or an array of content blocks"))
        }
    }

    /// The system prompt as sim system blocks, keeping which blocks are marked for caching.
    var systemBlocks: [SimConversation.SystemBlock] {
        switch self {
        case .string(let text): return [.init(text: text)]
        case .blocks(let blocks):
            return blocks.compactMap { block in
                block.text.map {
                    .init(
                        text: $0, cacheMarked: block.cacheControl != nil,
                        cacheHour: block.cacheControl?.ttl == "1h")
                }
            }
        }
    }

    /// The text blocks; blocks of other types (images, documents) carry no text the sim reads.
    var texts: [String] {
        switch self {
        case .string(let text): return [text]
        case .blocks(let blocks): return blocks.compactMap(\.text)
        }
    }
}

/// One content block; only `text` blocks matter to the sim, others are accepted and ignored.
struct ContentBlock: Decodable, Sendable, Equatable {
    /// `{"type": "ephemeral"}`, with `"ttl": "5m"` (the default) or `"1h"`; any other TTL is refused
    /// as Anthropic refuses it.
    struct CacheControl: Decodable, Sendable, Equatable {
        var type: String
        var ttl: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            ttl = try container.decodeIfPresent(String.self, forKey: .ttl)
            if let ttl, !["5m", "1h"].contains(ttl) {
                throw DecodingError.dataCorruptedError(
                    forKey: .ttl, in: container, debugDescription: "Input should be '5m' or '1h'")
            }
        }

        enum CodingKeys: String, CodingKey { case type, ttl }
    }

    var type: String
    var text: String?
    var cacheControl: CacheControl?

    enum CodingKeys: String, CodingKey {
        case type, text
        case cacheControl = "cache_control"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        text = type == "text" ? try container.decode(String.self, forKey: .text) : nil
        cacheControl = try container.decodeIfPresent(CacheControl.self, forKey: .cacheControl)
    }
}
