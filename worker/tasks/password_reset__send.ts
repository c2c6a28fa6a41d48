// Mails a password reset link, queued by POST /auth/password-reset-request for
// every address alike (core/signup/signup.ts says why). An address without
// an active account gets nothing. A second run sends a second link, which
// replaces the first: harmless, and rarer than a person asking twice.
import { z } from 'zod';
import { sendPasswordReset } from '../../core/signup/signup.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ email: z.string() }),
  async run({ email }, { db, config }) {
    await sendPasswordReset(db, config, email);
  },
});
