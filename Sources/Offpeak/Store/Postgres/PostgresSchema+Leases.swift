/// Version 9 of the PostgreSQL store: what refuses a commit whose process lost the run's lease
/// (`PostgresEngine.lockRun`), as the SQLite store refuses it in code (`SQLiteStore.renew`).
///
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    /// The SQLSTATE `offpeak_lease_lost` raises (`PostgresFault`), with the run as the message and
    /// the holder as the detail.
    static let leaseLostState = "OPL01"

    static let version9: [String] = [
        """
        CREATE FUNCTION offpeak_lease_lost(run text, holder text) RETURNS integer LANGUAGE plpgsql AS $body$
        BEGIN
            RAISE EXCEPTION USING ERRCODE = 'OPL01', MESSAGE = run, DETAIL = holder;
        END
        $body$
        """
    ]
}
