-- Issue 36 (docs/decisions/0240, addendum): usage_records' autoanalyze goes back to the
-- default (10 %). At 2 % an ANALYZE of the million-row table ran every few minutes under
-- load, and an ANALYZE holds its snapshot (unlike a vacuum): while it ran, the dead versions
-- of the tenant's open allotment row could not be pruned, and the settlement walked them
-- (891 and 1,595 buffer hits per call in two seeded runs, against 90-130 otherwise).
-- Vacuum stays at 2 %: a vacuum does not hold back what others may prune.
ALTER TABLE "usage_records" RESET (autovacuum_analyze_scale_factor);
