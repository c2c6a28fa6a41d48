// What a generating job is charged, decided at submit and kept on the job:
// each provider of its plan at its model's price (core/providers/prices.ts),
// in the unit that vendor bills. The reservation covers the dearest of them,
// so any provider the job falls back to can be paid; the job is charged, at
// settle, the price of the one that made the result (core/jobs/settle.ts).
//
// A site's own price of the kind (core/credits/prices.ts) stands for the
// model's where both are in the same unit: a global admin's as set; a tenant
// admin's never below the kind's floor, which, unless a global admin set one,
// is the model's price, since the operator pays the vendor.
import type { CommonQueryMethods } from '../../db/pool.ts';
import { costAt, kindPrice, noPrice } from '../credits/prices.ts';
import type { BillingUnit } from '../providers/models.ts';
import type { PlannedCall } from '../providers/plan.ts';
import { dearestTokenPrice } from '../providers/prices.ts';

/** The units a job is expected to use, in each unit its providers may bill (seconds, and 1,000s of characters...). */
export type Estimate = Partial<Record<BillingUnit, number>>;

export type PricedPlan = {
  /** The plan, each call with the unit and price it is charged at. */
  calls: (PlannedCall & { unit: BillingUnit; unit_price: number })[];
  /** What is reserved: the most any call of the plan may cost. */
  cost: number;
};

export async function pricePlan(
  db: CommonQueryMethods,
  siteId: string,
  kind: string,
  calls: PlannedCall[],
  estimate: Estimate,
  /** Units in the kind's own unit: for a call priced as its kind, or by a site's price in a unit not estimated. */
  kindUnits: number,
): Promise<PricedPlan> {
  const ofKind = await kindPrice(db, siteId, kind);
  const priced = calls.map((call) => {
    const model = call.unit !== undefined && call.unit_price !== undefined ? call : undefined;
    const site = ofKind?.site && (!model || model.unit === ofKind.site.unit) ? ofKind.site : undefined;
    if (site) {
      // One price for every token: a chat model's floor is its dearest.
      const modelFloor = model && dearestTokenPrice({ ...model, unit_price: model.unit_price! });
      const floor = site.by_global_admin ? 0 : (ofKind!.floor ?? modelFloor ?? ofKind!.global_price);
      const { output_unit_price: _replaced, ...rest } = call;
      return { ...rest, unit: site.unit as BillingUnit, unit_price: Math.max(site.price, floor) };
    }
    if (model) return { ...call, unit: model.unit!, unit_price: model.unit_price! };
    // A model nobody priced: its kind's price, as every job had before models had prices.
    if (!ofKind) throw noPrice(kind);
    return { ...call, unit: ofKind.unit as BillingUnit, unit_price: ofKind.global_price };
  });
  const costs = priced.map((call) => costAt(dearestTokenPrice(call), estimate[call.unit] ?? kindUnits));
  return { calls: priced, cost: Math.max(...costs) };
}
