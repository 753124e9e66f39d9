-- The ingest function's plans (issue: performance; docs/performance.md step 14).
--
-- Every lookup inside billing_ingest_usage_lines is a probe for a handful of rows of pages that are in
-- memory: a contract, a draft, a line, by their keys. PostgreSQL's default random_page_cost (4, a spinning
-- disk's) made the planner prefer reading a small table whole over an index probe: with 200 drafts it
-- planned the draft lookup as a sequential scan per pair (3.9 ms of a 1,600-event call against 0.5 ms
-- with the index; auto_explain), and the totals as a scan of all lines per invoice. 1.1 is the usual
-- figure for data in memory or on SSD; it applies to this function's plans only.
ALTER FUNCTION billing_ingest_usage_lines(
  uuid, timestamptz, text[], integer[], date[], date[], integer[], integer[], text[], text[], text[], text[], text[], numeric[],
  numeric[], numeric[], text[], integer[], numeric[], numeric[], text[], timestamptz[], numeric[], text[], text[], text[])
  SET random_page_cost = 1.1;
