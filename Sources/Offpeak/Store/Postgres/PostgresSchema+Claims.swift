/// Version 10 of the PostgreSQL store: claims on rounds of a run's requests, as the SQLite store's
/// v17 has them (`StoreMigrations.createClaims`), and what refuses a commit of requests no longer
/// due (`PostgresEngine.lockRun`), as `SQLiteStore.renew` refuses it in code.
///
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    /// The SQLSTATE `offpeak_claim_lost` raises (`PostgresFault`), with the run as the message.
    static let claimLostState = "OPL02"

    static let version10: [String] = [
        """
        CREATE TABLE claims (
            run_id text NOT NULL,
            owner text NOT NULL,
            host text NOT NULL,
            first_position bigint NOT NULL,
            last_position bigint NOT NULL,
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (run_id, owner))
        """,
        """
        CREATE FUNCTION offpeak_claim_lost(run text) RETURNS integer LANGUAGE plpgsql AS $body$
        BEGIN
            RAISE EXCEPTION USING ERRCODE = 'OPL02', MESSAGE = run;
        END
        $body$
        """,
    ]
}
