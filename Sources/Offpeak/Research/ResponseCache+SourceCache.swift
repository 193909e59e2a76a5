/// The cache keeps research sources beside answers, under the same TTL and size bound.
extension ResponseCache: SourceCache {}
