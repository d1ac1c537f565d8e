// One-shot job of the compose deployment: creates the S3 bucket enrichflow reads and writes, if it is
// missing, and optionally seeds it with files (`local=key`) that are not there yet, such as the sample
// input. Runs in the enrichflow image (its AWS SDK), configured by the same ENRICHFLOW_S3_* settings.
//   node deploy/create-bucket.js <bucket> [samples/companies.csv=in/companies.csv …]
import {
  CreateBucketCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';

const [bucket, ...seeds] = process.argv.slice(2);
if (!bucket) {
  process.stderr.write('usage: node deploy/create-bucket.js <bucket> [local-file=key …]\n');
  process.exit(2);
}
const client = new S3Client({
  endpoint: process.env.ENRICHFLOW_S3_ENDPOINT,
  region: process.env.ENRICHFLOW_S3_REGION ?? 'us-east-1',
  forcePathStyle: process.env.ENRICHFLOW_S3_FORCE_PATH_STYLE === 'true',
  credentials: {
    accessKeyId: process.env.ENRICHFLOW_S3_ACCESS_KEY_ID ?? '',
    secretAccessKey: process.env.ENRICHFLOW_S3_SECRET_ACCESS_KEY ?? '',
  },
});

const missing = (error) => error?.$metadata?.httpStatusCode === 404;

try {
  await client.send(new HeadBucketCommand({ Bucket: bucket }));
  process.stdout.write(`bucket ${bucket} exists\n`);
} catch (error) {
  if (!missing(error)) throw error;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  process.stdout.write(`bucket ${bucket} created\n`);
}

for (const seed of seeds) {
  const [file, key] = seed.split('=');
  if (!file || !key) throw new Error(`"${seed}" is not local-file=key`);
  try {
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    process.stdout.write(`s3://${bucket}/${key} exists\n`);
  } catch (error) {
    if (!missing(error)) throw error;
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: await readFile(file) }));
    process.stdout.write(`s3://${bucket}/${key} seeded from ${file}\n`);
  }
}
