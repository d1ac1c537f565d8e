// The part of the Data Service client the enrichment activities use, so tests and the worker can hand
// in the real undici client (or anything with the same calls) without activities knowing which.
import type { BulkDataset } from '../contract/datasets.js';
import type { ProspectDataset } from '../contract/prospect-datasets.js';

export interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  /** Unix seconds when the window frees up. */
  resetAt?: number;
}

export interface CallResult<T> {
  body: T;
  /** Absent when the response carried no rate-limit headers. */
  rateLimit?: RateLimitInfo | undefined;
}

/** Per call: the attempt's signal (cancellation reaches the wire) and a deadline in milliseconds. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface MatchItem {
  name?: string | null;
  domain?: string | null;
  url?: string | null;
  network_url?: string | null;
}

export interface EnrichmentCalls {
  matchBusinesses(
    body: { businesses_to_match: MatchItem[] },
    options?: CallOptions,
  ): Promise<CallResult<{ matched_businesses: { business_id: string | null }[] }>>;
  bulkEnrich(
    dataset: BulkDataset,
    body: { business_ids: string[]; parameters?: Record<string, unknown> },
    options?: CallOptions,
  ): Promise<CallResult<{ data: { business_id: string; data: unknown }[] }>>;
  enrichHierarchy(
    body: { business_id: string; parameters?: Record<string, unknown> },
    options?: CallOptions,
  ): Promise<CallResult<{ data?: unknown }>>;
}

/** A prospect match item: email, phone, network profile, or full name with company name. */
export interface ProspectMatchItem {
  full_name?: string | null;
  company_name?: string | null;
  email?: string | null;
  phone_number?: string | null;
  network?: string | null;
  business_id?: string | null;
}

/**
 * The prospect calls people runs make: match, then bulk enrichment of a prospect dataset (a provider
 * operation beyond spec 0.2.286). Each takes the attempt's signal and deadline, as the business calls do.
 */
export interface ProspectEnrichmentCalls {
  matchProspects(
    body: { prospects_to_match: ProspectMatchItem[] },
    options?: CallOptions,
  ): Promise<CallResult<{ matched_prospects: { prospect_id?: string | null }[] }>>;
  bulkEnrichProspects(
    dataset: ProspectDataset,
    body: { prospect_ids: string[]; parameters?: Record<string, unknown> },
    options?: CallOptions,
  ): Promise<CallResult<{ data: { prospect_id: string; data: unknown }[] }>>;
}
