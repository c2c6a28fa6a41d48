// Objects in an S3-compatible store (AWS, MinIO, Ceph...). Checksums are
// computed only where the API requires them: with the SDK's default, a
// streamed upload of known length is sent with aws-chunked framing that some
// S3-compatible servers store verbatim, corrupting the object without an error.
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkKey, type Storage } from './storage.ts';

export type S3Options = {
  bucket: string;
  region: string;
  endpoint?: string | undefined;
  forcePathStyle: boolean;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
};

const missing = (error: unknown) =>
  error instanceof S3ServiceException &&
  (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404);

export function s3Storage(options: S3Options): Storage {
  const client = new S3Client({
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
  });
  const Bucket = options.bucket;
  const size = async (key: string) => {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket, Key: checkKey(key) }))).ContentLength ?? 0;
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
  };
  return {
    driver: 's3',
    async put(key, body, contentType) {
      // Multipart for large streams, one PUT for small bodies: never the whole stream in memory.
      await new Upload({ client, params: { Bucket, Key: checkKey(key), Body: body, ContentType: contentType } }).done();
      return { key, size: Buffer.isBuffer(body) ? body.length : ((await size(key)) ?? 0) };
    },
    async read(key, range) {
      try {
        const object = await client.send(
          new GetObjectCommand({
            Bucket,
            Key: checkKey(key),
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        return object.Body as Readable;
      } catch (error) {
        if (missing(error)) return null;
        throw error;
      }
    },
    size,
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: checkKey(key) }));
    },
    // S3 lists keys in UTF-8 binary order, a thousand at a time.
    async *list() {
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, ContinuationToken }));
        for (const object of page.Contents ?? [])
          if (object.Key && object.LastModified) yield { key: object.Key, modified: object.LastModified };
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },
    signedUrl(key, seconds, contentType) {
      // Served as its own type, inline. S3 cannot add our nosniff and sandbox headers; what gets here is only
      // what uploads accept (no HTML, no SVG), which a browser does not run as a page.
      const command = new GetObjectCommand({
        Bucket,
        Key: checkKey(key),
        ResponseContentType: contentType,
        ResponseContentDisposition: 'inline',
      });
      return getSignedUrl(client, command, { expiresIn: seconds });
    },
  };
}
