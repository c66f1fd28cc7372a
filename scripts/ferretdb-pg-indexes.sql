-- Indexes FerretDB 1.x can use, on its PostgreSQL backend. Applied by scripts/infra.sh to the
-- database FerretDB stores in; idempotent. Only for the local stand-in: MongoDB needs none of this.
--
-- Why: FerretDB 1.24 pushes an equality filter down to PostgreSQL as `_jsonb->'field' @> '"value"'`
-- (backends/postgresql/query.go, filterEqual), and the indexes it creates are btree indexes on
-- `(_jsonb->'field')`, which `@>` cannot use. So every find, update or delete by `_id` read the whole
-- table: 25 ms for one document of a 20,000-document collection here, growing with the collection.
-- A GIN (jsonb_path_ops) index on the same expression serves `@>`: 1.7 ms for the same read.
--
-- How: an event trigger gives every btree index FerretDB creates on a collection table (its unique
-- `_id` index and every index the apps declare) a GIN twin on the same expressions, named
-- `<btree name>_gin`, and drops the twin with it. Indexes made before the trigger existed get their
-- twins below. FerretDB never sees the twins (it reads its own metadata, not pg_indexes); only the
-- planner does. `$in`, ranges and sorts are not pushed down by FerretDB 1.x at all: those still scan.

CREATE OR REPLACE FUNCTION smartlock_gin_twin(idx oid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ix pg_index;
  tbl text;
  nsp text;
  idxname text;
  cols text := '';
BEGIN
  SELECT * INTO ix FROM pg_index WHERE indexrelid = idx;
  IF NOT FOUND OR ix.indnkeyatts = 0 THEN RETURN; END IF;
  IF (SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = idx) <> 'btree' THEN RETURN; END IF;
  SELECT c.relname, n.nspname INTO tbl, nsp FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ix.indrelid;
  -- FerretDB's own metadata tables are read by FerretDB with its own (indexed) queries.
  IF tbl LIKE '\_ferretdb\_%' THEN RETURN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = ix.indrelid AND attname = '_jsonb' AND NOT attisdropped) THEN RETURN; END IF;
  FOR k IN 1..ix.indnkeyatts LOOP
    -- FerretDB indexes expressions on _jsonb only; an index on a plain column is not one of its.
    IF ix.indkey[k - 1] <> 0 THEN RETURN; END IF;
    cols := cols || CASE WHEN k > 1 THEN ', ' ELSE '' END || '(' || pg_get_indexdef(idx, k, true) || ') jsonb_path_ops';
  END LOOP;
  SELECT relname INTO idxname FROM pg_class WHERE oid = idx;
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin (%s)', left(idxname, 59) || '_gin', nsp, tbl, cols);
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
  FOR r IN SELECT schema_name, object_name FROM pg_event_trigger_dropped_objects()
           WHERE object_type = 'index' AND object_name NOT LIKE '%\_gin' LOOP
    EXECUTE format('DROP INDEX IF EXISTS %I.%I', r.schema_name, left(r.object_name, 59) || '_gin');
  END LOOP;
END $$;

DROP EVENT TRIGGER IF EXISTS smartlock_gin_twin_created;
CREATE EVENT TRIGGER smartlock_gin_twin_created ON ddl_command_end WHEN TAG IN ('CREATE INDEX')
  EXECUTE FUNCTION smartlock_gin_twin_created();
DROP EVENT TRIGGER IF EXISTS smartlock_gin_twin_dropped;
CREATE EVENT TRIGGER smartlock_gin_twin_dropped ON sql_drop WHEN TAG IN ('DROP INDEX')
  EXECUTE FUNCTION smartlock_gin_twin_dropped();

-- Twins for indexes made before the trigger.
SELECT count(smartlock_gin_twin(i.indexrelid)) AS checked
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast');
