-- Issue 36 (docs/decisions/0332): a batch of one record is opened and settled by a PL/pgSQL
-- function of plain statements instead of the batch statement. Written by hand (a function
-- is not in schema.prisma's language).
--
-- The batch statements (OPEN in src/storage/usage-records.ts, usage_records_settle) are one
-- plan of about forty nodes: every call initializes, runs and tears down all of them (the
-- CTEs' tuple stores, the window, the subplans), about 0.15 ms of the open's 0.3 ms for one
-- row on this project's machines, whatever the rows. At one connection every batch is one
-- record. These functions do what the batch statements do for one row, with the same
-- checks in the same order, by key only; usage-records.test.ts runs every case through
-- both and compares what they wrote. A batch of two or more still goes to the batch
-- statements (cheaper from about four rows a call on, and what group commit makes under load).

-- The open of one record: its Idempotency-Key claimed (if it has one), its allotment's claim
-- taken (a managed record with units reserved, from the tenant's open allotment if that has
-- room as it stands when locked), the record inserted. No row when the key was claimed in
-- the last 24 hours. live_id: the tenant's open allotment, claimed from or not.
CREATE FUNCTION usage_records_open_one(
  p_id text, p_tenant_id text, p_api_key_id text, p_service_alias text, p_model_alias text, p_price_id text,
  p_upstream_id text, p_discount_bps int, p_stream boolean, p_input_tokens_bound int, p_output_tokens_cap int,
  p_reserved_units bigint, p_hold_expires_at timestamptz, p_idempotency_key text, p_mode text, p_api text)
RETURNS TABLE (id text, allotment_id text, hold_id text, live_id text)
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  v_live text;
  v_hold text;
  v_free bigint;
  v_claimed text;
BEGIN
  IF p_idempotency_key IS NOT NULL AND p_api_key_id IS NOT NULL THEN
    INSERT INTO idempotency_keys (tenant_id, api_key_id, key, request_id)
    VALUES (p_tenant_id, p_api_key_id, p_idempotency_key, p_id)
    ON CONFLICT (tenant_id, api_key_id, key) DO UPDATE SET request_id = EXCLUDED.request_id, created_at = now()
    WHERE idempotency_keys.created_at < now() - interval '24 hours';
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  IF p_mode = 'managed' AND p_reserved_units > 0 THEN
    SELECT a.id, a.hold_id, a.units - a.claimed - a.carved - a.frozen INTO v_live, v_hold, v_free
    FROM allotments a WHERE a.tenant_id = p_tenant_id AND a.state = 'open' FOR UPDATE;
    IF v_live IS NOT NULL AND p_reserved_units <= v_free THEN
      UPDATE allotments a SET claimed = a.claimed + p_reserved_units, version = a.version + 1, last_claim_at = now(), updated_at = now()
      WHERE a.id = v_live AND a.state = 'open' AND a.units - a.claimed - a.carved - a.frozen >= p_reserved_units;
      IF FOUND THEN
        v_claimed := v_live;
      END IF;
    END IF;
  END IF;
  INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
    input_tokens_bound, output_tokens_cap, reserved_units, hold_expires_at, updated_at, mode, api, allotment_id, opened_txid)
  VALUES (p_id, p_tenant_id, p_api_key_id, p_service_alias, p_model_alias, p_price_id, p_upstream_id, p_discount_bps, 'reserved', p_stream,
    p_input_tokens_bound, p_output_tokens_cap, p_reserved_units, p_hold_expires_at, now(), p_mode, p_api, v_claimed,
    pg_current_xact_id()::text::bigint);
  RETURN QUERY SELECT p_id, v_claimed, v_hold, v_live;
END $$;

-- The settlement of one record, as usage_records_settle settles each of a batch: the record's
-- allotment locked (if the record is still `reserved`), the record updated if it is still
-- `reserved` (HOT: no index holds a column this changes), its event appended to the log the
-- relay tails, and what it did not use given back to the locked allotment. Its id when it
-- changed, no row otherwise.
CREATE FUNCTION usage_records_settle_one(p_id text, p_status text, p_error_code text, p_hold_id text, p_final_units bigint, p_usage_json text)
RETURNS TABLE (id text)
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  v_locked text;
  v_id text;
  v_allotment text;
  v_status text;
  v_hold text;
  v_reserved bigint;
  v_final bigint;
BEGIN
  SELECT a.id INTO v_locked FROM allotments a
  WHERE a.id = (SELECT r.allotment_id FROM usage_records r WHERE r.id = p_id AND r.status = 'reserved')
  FOR UPDATE;
  WITH upd AS (
    UPDATE usage_records r SET status = p_status, error_code = p_error_code, hold_id = p_hold_id,
      final_units = COALESCE(p_final_units, r.final_units), usage_json = COALESCE(p_usage_json, r.usage_json),
      settled_at = CASE WHEN p_status <> 'review' THEN now() ELSE r.settled_at END, updated_at = now(),
      settled_txid = pg_current_xact_id()::text::bigint, settled_event_at = now(), settled_status = p_status,
      settled_error_code = p_error_code, settled_final_units = p_final_units
    WHERE r.id = p_id AND r.status = 'reserved'
    RETURNING r.id, r.allotment_id, r.status, r.hold_id, r.reserved_units, r.final_units, r.tenant_id, r.api_key_id, r.settled_txid,
      r.settled_status, r.settled_final_units, r.settled_error_code, r.settled_event_at),
  ev AS (
    INSERT INTO usage_record_settlements (seq, record_id, tenant_id, api_key_id, status, reserved_units, final_units, error_code, created_at)
    SELECT settled_txid, id, tenant_id, api_key_id, settled_status, reserved_units, settled_final_units, settled_error_code, settled_event_at FROM upd)
  SELECT upd.id, upd.allotment_id, upd.status, upd.hold_id, upd.reserved_units, upd.final_units
  INTO v_id, v_allotment, v_status, v_hold, v_reserved, v_final FROM upd;
  IF v_locked IS NOT NULL THEN
    UPDATE allotments a SET
      claimed = a.claimed - CASE WHEN v_allotment = a.id THEN v_reserved - allotment_claim(v_status, v_hold, v_reserved, v_final) ELSE 0 END,
      carved = a.carved + CASE WHEN v_allotment = a.id AND v_hold IS NOT NULL THEN v_reserved ELSE 0 END,
      version = a.version + 1, updated_at = now()
    WHERE a.id = v_locked;
  END IF;
  IF v_id IS NOT NULL THEN
    RETURN QUERY SELECT v_id;
  END IF;
END $$;
