-- Indexes FerretDB 1.x can use, on its PostgreSQL backend. Applied by scripts/infra.sh to the
-- database FerretDB stores in; idempotent. Only for the local stand-in: MongoDB needs none of this.
--
-- Why: FerretDB 1.24 pushes an equality filter down to PostgreSQL as `_jsonb->'field' @> '"value"'`
-- (backends/postgresql/query.go, filterEqual), and the indexes it creates are btree indexes on
-- `(_jsonb->'field')`, which `@>` cannot use. So every find, update or delete by `_id` read the whole
-- table: 25 ms for one document of a 20,000-document collection here, growing with the collection.
-- A GIN (jsonb_path_ops) index on the same expression serves `@>`: 1.7 ms for the same read.
--
-- How: an event trigger gives every field of every btree index FerretDB creates on a collection
-- table (its unique `_id` index and every index the apps declare) a GIN twin of its own, one per
-- field expression and table, named `<table>_<md5 of the expression>_gin`. One per field, not one
-- over all the fields of a compound index: a multi-column GIN index reads the whole posting list of
-- every key it is given, so a lookup by (company_id, reference_id) read every index entry of the
-- company (6,000 per booking with 3,000 stored events, growing with the data); with a GIN index per
-- field the planner takes the selective one (reference_id) and checks the other on the row. Twins
-- that no btree index needs any more go when an index is dropped. FerretDB never sees the twins (it
-- reads its own metadata, not pg_indexes); only the planner does. `$in`, ranges and sorts are not
-- pushed down by FerretDB 1.x at all: those still scan.

CREATE OR REPLACE FUNCTION smartlock_gin_twin(idx oid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ix pg_index;
  tbl text;
  nsp text;
  expr text;
BEGIN
  SELECT * INTO ix FROM pg_index WHERE indexrelid = idx;
  IF NOT FOUND OR ix.indnkeyatts = 0 THEN RETURN; END IF;
  IF (SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = idx) <> 'btree' THEN RETURN; END IF;
  SELECT c.relname, n.nspname INTO tbl, nsp FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ix.indrelid;
  -- FerretDB's own metadata tables are read by FerretDB with its own (indexed) queries.
  IF tbl LIKE '\_ferretdb\_%' THEN RETURN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = ix.indrelid AND attname = '_jsonb' AND NOT attisdropped) THEN RETURN; END IF;
  -- FerretDB indexes expressions on _jsonb only; an index on a plain column is not one of its.
  FOR k IN 1..ix.indnkeyatts LOOP
    IF ix.indkey[k - 1] <> 0 THEN RETURN; END IF;
  END LOOP;
  FOR k IN 1..ix.indnkeyatts LOOP
    expr := pg_get_indexdef(idx, k, true);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin ((%s) jsonb_path_ops)', left(tbl, 45) || '_' || left(md5(expr), 12) || '_gin', nsp, tbl, expr);
  END LOOP;
END $$;

-- The twins of a schema that no btree index of their table has the field of any more.
CREATE OR REPLACE FUNCTION smartlock_gin_twin_sweep(nsp text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN
    SELECT t.indexrelid AS twin, t.indrelid AS tbl, pg_get_indexdef(t.indexrelid, 1, true) AS expr, c.relname AS name
    FROM pg_index t JOIN pg_class c ON c.oid = t.indexrelid JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = nsp AND a.amname = 'gin' AND c.relname LIKE '%\_gin'
  LOOP
    IF NOT EXISTS (
      SELECT 1 FROM pg_index b JOIN pg_class bc ON bc.oid = b.indexrelid JOIN pg_am ba ON ba.oid = bc.relam, generate_series(1, b.indnkeyatts) AS k
      WHERE b.indrelid = r.tbl AND ba.amname = 'btree' AND pg_get_indexdef(b.indexrelid, k, true) = r.expr
    ) THEN
      EXECUTE format('DROP INDEX IF EXISTS %I.%I', nsp, r.name);
    END IF;
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION smartlock_gin_twin_created() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  -- The twin's own CREATE INDEX comes back here too: smartlock_gin_twin() skips GIN indexes.
  FOR r IN SELECT objid FROM pg_event_trigger_ddl_commands() WHERE object_type = 'index' LOOP
    PERFORM smartlock_gin_twin(r.objid);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION smartlock_gin_twin_dropped() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  -- FerretDB drops an index by name (dropIndexes); a dropped table or schema takes its twins along.
  -- A twin's own DROP INDEX comes back here too: sweeping again finds nothing more to drop.
  FOR r IN SELECT DISTINCT schema_name FROM pg_event_trigger_dropped_objects()
           WHERE object_type = 'index' AND object_name NOT LIKE '%\_gin' LOOP
    PERFORM smartlock_gin_twin_sweep(r.schema_name);
  END LOOP;
END $$;

DROP EVENT TRIGGER IF EXISTS smartlock_gin_twin_created;
CREATE EVENT TRIGGER smartlock_gin_twin_created ON ddl_command_end WHEN TAG IN ('CREATE INDEX')
  EXECUTE FUNCTION smartlock_gin_twin_created();
DROP EVENT TRIGGER IF EXISTS smartlock_gin_twin_dropped;
CREATE EVENT TRIGGER smartlock_gin_twin_dropped ON sql_drop WHEN TAG IN ('DROP INDEX')
  EXECUTE FUNCTION smartlock_gin_twin_dropped();

-- Earlier twins were one GIN index over all the fields of their btree index, named `<btree>_gin`
-- (btree names end in `_idx`): replaced by the per-field twins below.
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam
           WHERE c.relkind = 'i' AND a.amname = 'gin' AND c.relname LIKE '%\_idx\_gin' LOOP
    EXECUTE format('DROP INDEX IF EXISTS %I.%I', r.nspname, r.relname);
  END LOOP;
END $$;

-- Twins for indexes made before the trigger.
SELECT count(smartlock_gin_twin(i.indexrelid)) AS checked
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast');
