// Mails a new verification link, queued by POST /auth/signup/resend-verification
// for every address alike (core/signup/signup.ts says why). An address
// without an unverified, active account gets nothing. A second run sends a
// second link, which replaces the first.
import { z } from 'zod';
import { resendVerification } from '../../core/signup/signup.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ email: z.string() }),
  async run({ email }, { db, config }) {
    await resendVerification(db, config, email);
  },
});
