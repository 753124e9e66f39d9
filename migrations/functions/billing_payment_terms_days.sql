-- The payment terms an invoice of a contract is dated with (docs/api.md, "Payment terms"): the contract's own,
-- else its customer's, else the account's default. The one home of this rule: drafts, projection and finalizing
-- all read it here.
CREATE OR REPLACE FUNCTION billing_payment_terms_days(p_company uuid, p_contract text) RETURNS integer
LANGUAGE sql STABLE AS $$
  SELECT COALESCE(c.payment_terms_days, cu.payment_terms_days, co.payment_terms_days)
    FROM contracts c
    JOIN companies co ON co.id = c.company_id
    LEFT JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id
   WHERE c.company_id = p_company AND c.id = p_contract
$$;
