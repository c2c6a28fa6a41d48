// An AI edit of an image: the instruction (and optional mask) applied by the
// local editor or the provider, the result stored under a key derived from
// the job, and recorded as the item's new version — once: a rerun of the same
// job finds its version already there.
import sharp from 'sharp';
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import { imageKey } from '../../core/media/items.ts';
import { recordVersion, bytesOf, versionedItem } from '../../core/media/versions.ts';
import { removeFiles } from '../../core/storage/index.ts';
import { resolveSite } from '../../core/tenancy/site-access.ts';
import { isPending } from '../../core/providers/capabilities.ts';
import { planField, planFor } from '../../core/providers/plan.ts';
import { adapterFor } from '../../core/providers/registry.ts';
import { inTurn } from '../providers/chain.ts';
import { editLocally, transparentWhereDark } from '../providers/image/edit.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob } from '../job.ts';

export default defineJob({
  input: z.object({
    media_id: z.uuid(),
    instruction: z.string().min(1).max(1000),
    mask_media_id: z.uuid().optional(),
    providers: planField,
  }),
  async run(input, context) {
    const { db, job, config, storage, logger } = context;
    const item = await versionedItem(db, job.site_id, input.media_id);
    if (!item) throw permanent('media_missing', 'The image was deleted before it was edited.');
    if (item.version_job_id === job.id) {
      return {
        status: 'succeeded',
        units: 1,
        output: { media_id: input.media_id, version: item.version, note: 'already applied by an earlier run' },
      };
    }
    const maskKey = input.mask_media_id ? await imageKey(db, job.site_id, input.mask_media_id) : null;
    if (input.mask_media_id && !maskKey) throw permanent('media_missing', 'The mask was deleted before the edit.');
    await context.progress(0.2, 'editing');
    const source = await bytesOf(storage, item.storage_key);
    const mask = maskKey ? await bytesOf(storage, maskKey) : null;
    const plan = input.providers ?? planFor(config.providers, 'image_edit');
    const { value: edited, call } = await inTurn('image_edit', plan, context, async (call) => {
      if (call.vendor === 'local')
        return editLocally(config, source, input.instruction, mask).catch((error: unknown) => {
          if (error instanceof Error && /pixel limit/i.test(error.message))
            throw permanent('image_too_large', 'The image exceeds MEDIA_MAX_PIXELS.', error);
          throw error;
        });
      const made = await adapterFor(config, 'image_edit', call.vendor).edit(
        {
          instruction: input.instruction,
          image: { bytes: source },
          mask: mask ? { bytes: await transparentWhereDark(mask) } : undefined,
          count: 1,
          format: 'png',
        },
        { model: call.model, signal: context.signal },
      );
      if (isPending(made))
        throw permanent('provider_invalid_response', `${call.vendor} did not answer the edit at once.`);
      return { output: made[0]!.bytes, applied: [input.instruction] };
    });
    const { output, applied } = edited;
    const meta = await sharp(output, { limitInputPixels: config.media.maxPixels })
      .metadata()
      .catch(() => null);
    if (!meta?.format || !meta.width)
      throw permanent('provider_invalid_response', 'The edit did not produce an image.');
    await context.progress(0.8, 'saving the new version');
    const key = `${job.tenant_id}/${job.site_id}/edit-${job.id}.${meta.format}`;
    const stored = await storage.put(key, output, `image/${meta.format}`);
    const site = await resolveSite(db, job.site_id);
    if (!site) throw permanent('media_missing', 'The site is gone.');
    const actor: Actor = job.user_id
      ? { kind: 'user', userId: job.user_id, sessionId: 'worker', isGlobalAdmin: false }
      : { kind: 'service', serviceAccountId: job.actor_id ?? job.id, tenantId: job.tenant_id, scopes: [] };
    const { saved, staleVariants } = await db.transaction((tx) =>
      recordVersion(tx, config, {
        site,
        actor,
        mediaId: input.media_id,
        file: { key, mimeType: `image/${meta.format}`, size: stored.size },
        width: meta.width ?? null,
        height: meta.height ?? null,
        jobId: job.id,
      }),
    );
    await removeFiles(storage, logger, staleVariants);
    return {
      status: 'succeeded',
      units: 1,
      call,
      output: {
        media_id: input.media_id,
        version: saved.version,
        applied,
        provider: call.vendor,
        model: call.model,
        placeholder: call.vendor === 'local',
      },
    };
  },
});
