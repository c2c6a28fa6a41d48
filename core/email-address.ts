// An e-mail address as the server takes it: zod's check, a practical subset
// of RFC 5321 (no quoted local parts, no address literals, a dotted domain).
// `format: email` alone promises more than that, so the document gives the
// very pattern the server applies.
import { z } from 'zod';

export const emailAddress = (maxLength = 320) => z.email().max(maxLength).meta({ pattern: z.regexes.email.source });
