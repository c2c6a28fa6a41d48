// Credit accounts are made on first use; transactions racing to make the same
// one all get it, whichever of them made it.
import { poolAccount, userAccount } from '../../core/credits/accounts.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, newUser } from '../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const race = <T>(count: number, each: () => Promise<T>) => Promise.all(Array.from({ length: count }, each));

it('gives ten racing transactions the same new user account', async () => {
  const site = await newSite(t, await newTenant(t));
  const user = await newUser(t);
  const ids = await race(10, () => t.services.db.transaction((tx) => userAccount(tx, site, user.id)));
  expect(new Set(ids).size).toBe(1);
  expect(await userAccount(t.services.db, site, user.id)).toBe(ids[0]);
});

it('gives ten racing transactions the same new tenant pool', async () => {
  const tenant = await newTenant(t);
  const ids = await race(10, () => t.services.db.transaction((tx) => poolAccount(tx, tenant.id)));
  expect(new Set(ids).size).toBe(1);
});
