// The EXIF fields worth showing about a photo — camera, lens, exposure, when
// it was taken — read with exif-reader from what sharp extracts. The GPS
// position is left out unless MEDIA_EXIF_GPS is set: a photo's location is
// often where its author lives. Everything else (maker notes, serial numbers,
// thumbnails) is left out always.
import exifReader from 'exif-reader';

const kept = {
  Image: ['Make', 'Model', 'Software', 'DateTime', 'Orientation', 'Artist', 'Copyright'],
  Photo: [
    'DateTimeOriginal',
    'ExposureTime',
    'FNumber',
    'ISOSpeedRatings',
    'FocalLength',
    'FocalLengthIn35mmFilm',
    'LensMake',
    'LensModel',
    'Flash',
    'WhiteBalance',
  ],
  GPSInfo: ['GPSLatitudeRef', 'GPSLatitude', 'GPSLongitudeRef', 'GPSLongitude', 'GPSAltitude'],
} as const;

/** A value as JSON can hold and PostgreSQL can store: dates as ISO text, strings without NULs, short arrays of numbers. */
function clean(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  if (typeof value === 'string') {
    const text = value
      .replace(/\0+$/, '')
      .replace(/[\u0000\uD800-\uDFFF]/g, '')
      .trim();
    return text ? text.slice(0, 200) : undefined;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (
    Array.isArray(value) &&
    value.length <= 8 &&
    value.every((item) => typeof item === 'number' && Number.isFinite(item))
  )
    return value;
  return undefined;
}

function parse(raw: Buffer | undefined): ReturnType<typeof exifReader> | null {
  if (!raw?.length) return null;
  try {
    return exifReader(raw);
  } catch {
    // Broken EXIF is common and never a reason to refuse the image.
    return null;
  }
}

/** Whether the image's EXIF gives where it was taken. */
export const hasLocation = (raw: Buffer | undefined) => Object.keys(parse(raw)?.GPSInfo ?? {}).length > 0;

export function pickExif(raw: Buffer | undefined, withGps: boolean): Record<string, unknown> | null {
  const parsed = parse(raw);
  if (!parsed) return null;
  const picked: Record<string, unknown> = {};
  for (const [group, fields] of Object.entries(kept)) {
    if (group === 'GPSInfo' && !withGps) continue;
    const values = parsed[group as keyof typeof kept] as Record<string, unknown> | undefined;
    for (const field of fields) {
      const value = clean(values?.[field]);
      if (value !== undefined) picked[field] = value;
    }
  }
  return Object.keys(picked).length ? picked : null;
}
