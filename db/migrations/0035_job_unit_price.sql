-- The unit price a job was submitted at: what its reservation was made from
-- and what its units are charged at when it settles (never more than was
-- reserved), so settling reads no price list. Null for jobs submitted before
-- this column: they are charged at the price of the moment, as before.
alter table jobs add column unit_price numeric(14, 4);
