/// offpeak's version, the one place it is written: `offpeak --version` prints it, and the man page
/// `make install` generates carries it. Raised when a release is cut.
enum OffpeakVersion {
    static let current = "0.14.0"
}
