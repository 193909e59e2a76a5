/// The row id of a key in the SQLite cache table (`cache_entries.id`, its INTEGER PRIMARY KEY):
/// FNV-1a over the key's UTF-8, 64 bits.
///
/// A lookup finds the row by this id and checks the key (`CacheLookups.lookupSQL`): one descent of
/// the table's B-tree, whose inner pages hold only integers, where a text primary key costs two
/// (its index, then the table). A `WITHOUT ROWID` table would be one descent too, but its inner
/// pages hold whole rows, about a kilobyte of payload each, and measured twice as slow as today's.
///
/// Two keys with the same id share one row: saving one replaces the other, as eviction would
/// (`SQLiteStore.upsertSQL`), and a lookup of the other misses, since it checks the key. FNV is
/// chosen for its speed and for being fixed forever (the ids are stored), not for resisting a
/// chosen collision; one costs a cache miss, never a wrong answer.
enum CacheRowID {
    static func of(_ key: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}
