/// Version 4 of the PostgreSQL store: a request's run is checked once per statement, not per row.
///
/// The foreign key `requests.run_id → runs.id` ran its check once for every inserted request (a
/// query that locks the run's row): a quarter of the insert of a chunk of 500 submitted requests,
/// a tenth of `offpeak submit` (100,000 lines: 5.4 → 5.0 s with it dropped). Triggers keep what it
/// kept: an insert checks the runs its rows name in one statement over the new rows, locking each
/// (`FOR KEY SHARE`, as the foreign key's check did, so the run cannot be deleted before the insert
/// commits); a request moved to another run is checked row by row (offpeak never moves one); a
/// run's deletion deletes its requests (`ON DELETE CASCADE`), and a run's id cannot change while
/// requests name it. A missing run fails as the foreign key did (SQLSTATE 23503). Every other
/// foreign key stays: their tables take rows one at a time. The text is frozen with the version,
/// as a migration's is.
extension PostgresSchema {
    static let version4: [String] = requestRuns

    private static let missingRun = """
        RAISE EXCEPTION 'insert or update on table "requests" violates foreign key constraint "requests_run_id_fkey"'
            USING ERRCODE = 'foreign_key_violation', DETAIL = 'Key (run_id) is not present in table "runs".';
        """

    static let requestRuns = [
        "ALTER TABLE requests DROP CONSTRAINT requests_run_id_fkey",
        """
        CREATE FUNCTION offpeak_requests_run_check() RETURNS trigger LANGUAGE plpgsql AS $body$
        DECLARE
            named bigint;
            found bigint;
        BEGIN
        SELECT count(DISTINCT run_id) INTO named FROM new_rows;
        SELECT count(*) INTO found FROM (
            SELECT 1 FROM runs WHERE id IN (SELECT run_id FROM new_rows) FOR KEY SHARE) r;
        IF found < named THEN
            \(missingRun)
        END IF;
        RETURN NULL;
        END
        $body$
        """,
        """
        CREATE TRIGGER requests_run_insert AFTER INSERT ON requests REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_requests_run_check()
        """,
        """
        CREATE FUNCTION offpeak_requests_run_moved() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        PERFORM 1 FROM runs WHERE id = NEW.run_id FOR KEY SHARE;
        IF NOT FOUND THEN
            \(missingRun)
        END IF;
        RETURN NULL;
        END
        $body$
        """,
        """
        CREATE TRIGGER requests_run_update AFTER UPDATE OF run_id ON requests
        FOR EACH ROW WHEN (OLD.run_id IS DISTINCT FROM NEW.run_id) EXECUTE FUNCTION offpeak_requests_run_moved()
        """,
        """
        CREATE FUNCTION offpeak_runs_delete_requests() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        DELETE FROM requests WHERE run_id IN (SELECT id FROM old_rows);
        RETURN NULL;
        END
        $body$
        """,
        """
        CREATE TRIGGER runs_delete_requests AFTER DELETE ON runs REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_runs_delete_requests()
        """,
        """
        CREATE FUNCTION offpeak_runs_id_kept() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        IF EXISTS (SELECT 1 FROM requests WHERE run_id = OLD.id) THEN
            RAISE EXCEPTION 'update on table "runs" violates foreign key constraint "requests_run_id_fkey" on table "requests"'
                USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
        END
        $body$
        """,
        """
        CREATE TRIGGER runs_id_kept AFTER UPDATE OF id ON runs
        FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION offpeak_runs_id_kept()
        """,
    ]
}
