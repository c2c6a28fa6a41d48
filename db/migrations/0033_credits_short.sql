-- Raised by a submit's statement when the payer's credits do not cover what
-- the job reserves. The statement takes the payer's account row last (after
-- the job row and its queue entry), so that row is held as briefly as it can
-- be; when the reservation then finds too little, this undoes the whole
-- statement and tells the caller how much there was. SQLSTATE P0402: ours.
create function credits_short(available bigint, required bigint) returns integer language plpgsql as $$
begin
  raise exception 'Not enough credits: % needed, % available.', required, available
    using errcode = 'P0402', detail = json_build_object('available', available, 'required', required)::text;
end $$;
