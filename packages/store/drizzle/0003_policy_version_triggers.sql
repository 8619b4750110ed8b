-- Any change to policies, assignments or decision functions bumps store_state.policy_version,
-- whatever code path makes it; session builders compare it to reuse cached effective policies.
INSERT INTO store_state (id, policy_version) VALUES (1, 0);--> statement-breakpoint
CREATE FUNCTION palisade_bump_policy_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE store_state SET policy_version = policy_version + 1 WHERE id = 1;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER policies_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON policies
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_bump_policy_version();--> statement-breakpoint
CREATE TRIGGER policy_assignments_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON policy_assignments
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_bump_policy_version();--> statement-breakpoint
CREATE TRIGGER decision_functions_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON decision_functions
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_bump_policy_version();
