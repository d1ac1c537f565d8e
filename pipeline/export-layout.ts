// Where a search export keeps its working files, under the run's `_work/` (output tables sit at the
// top): shared by the export activities and the CLI that shows or retries an export.
const pad = (n: number, width = 5) => String(n).padStart(width, '0');

/** Where an export keeps its working files, under the run's `_work/` (output tables sit at the top). */
export const exportLayout = {
  spec: '_work/export/spec.json',
  exclude: '_work/export/exclude.json',
  plan: '_work/export/plan.json',
  slicesPrefix: '_work/export/slices/',
  sliceDone: (slice: number) => `_work/export/slices/s${pad(slice)}.json`,
  pagesPrefix: '_work/export/pages/',
  page: (slice: number, page: number) => `_work/export/pages/s${pad(slice)}/p${pad(page, 6)}.jsonl`,
  cursorPage: (slice: number, seq: number) => `_work/export/pages/s${pad(slice)}/c${pad(seq, 6)}.jsonl`,
  postIds: (chunk: number) => `_work/export/posts/ids/chunk-${pad(chunk)}.json`,
  postsPrefix: '_work/export/posts/records/',
  post: (index: number) =>
    `_work/export/posts/records/${pad(Math.floor(index / POST_IDS_PER_CHUNK))}/${pad(index % POST_IDS_PER_CHUNK, 4)}.json`,
  summary: '_work/export/summary.json',
};

/** Prospect ids per posts plan file. */
export const POST_IDS_PER_CHUNK = 1_000;
