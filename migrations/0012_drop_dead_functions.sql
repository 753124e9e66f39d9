-- billing_ingest_usage (0005) has been unused since 0009, which dropped it; 0005 no longer creates it, so this
-- drop (IF EXISTS) leaves a database that stopped between 0005 and 0008 with the same functions as any other.
DROP FUNCTION IF EXISTS billing_ingest_usage(
  uuid, timestamptz, text[], text[], text[], numeric[], numeric[], numeric[], text[], text[], text[], numeric[],
  text[], integer[], text[], text[], text[], numeric[], date[], date[], timestamptz[], integer[]);
