// The employer attributes that prospect filters read (industry, region, city, size, revenue, website), held in
// typed arrays by business row index, so that the employer part of a prospect fetch is a loop over the
// businesses instead of a query. Categories, NAICS codes and locations are resolved through the
// generator's catalogues, whose positions the businesses table stores.
import { COMPANY_SIZES, REVENUE_RANGES, type ProspectFilters } from '../../contract/index.js';
import { INDUSTRIES } from '../data/industries.js';
import { cityRegionCountry, REGION_LIST } from '../data/places.js';
import type { SandboxStore } from '../data/store.js';

type Values = { values: string[] } | null | undefined;

function wanted(filter: Values): Set<string> | null {
  return filter && filter.values.length > 0
    ? new Set(filter.values.map((value) => value.toLowerCase()))
    : null;
}

function maskOf<T>(items: readonly T[], test: (item: T) => boolean): Uint8Array {
  return Uint8Array.from(items, (item) => (test(item) ? 1 : 0));
}

export class BusinessIndex {
  private constructor(
    readonly size: number,
    private readonly industry: Uint8Array,
    private readonly region: Uint16Array,
    private readonly city: Uint8Array,
    private readonly sizeRank: Uint8Array,
    private readonly revenueRank: Uint8Array,
    private readonly hasWebsite: Uint8Array,
  ) {}

  static async load(store: SandboxStore): Promise<BusinessIndex> {
    const size = store.businessIds.length;
    const columns = {
      industry: new Uint8Array(size),
      region: new Uint16Array(size),
      city: new Uint8Array(size),
      sizeRank: new Uint8Array(size),
      revenueRank: new Uint8Array(size),
      hasWebsite: new Uint8Array(size),
    };
    await store.withConnection(async (connection) => {
      const result = await connection.stream(
        'SELECT bix, industry_id, region_id, city_id, size_rank, revenue_rank, has_website FROM businesses',
      );
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const [bix, industry, region, city, sizeRank, revenueRank, website] = [0, 1, 2, 3, 4, 5, 6].map((c) =>
          chunk.getColumnVector(c),
        );
        for (let i = 0; i < chunk.rowCount; i += 1) {
          const row = bix?.getItem(i) as number;
          columns.industry[row] = industry?.getItem(i) as number;
          columns.region[row] = region?.getItem(i) as number;
          columns.city[row] = city?.getItem(i) as number;
          columns.sizeRank[row] = sizeRank?.getItem(i) as number;
          columns.revenueRank[row] = revenueRank?.getItem(i) as number;
          columns.hasWebsite[row] = website?.getItem(i) === true ? 1 : 0;
        }
      }
    });
    return new BusinessIndex(
      size,
      columns.industry,
      columns.region,
      columns.city,
      columns.sizeRank,
      columns.revenueRank,
      columns.hasWebsite,
    );
  }

  /**
   * Employers allowed by the prospect filters about the company (region, city, size, revenue,
   * categories, NAICS, website); null when none of them is given. `company_name` is not handled here, nor
   * `company_country_code` (the prospect index has bitmaps by employer country).
   */
  employerMask(filters: ProspectFilters): Uint8Array | null {
    let industries: Uint8Array | null = null;
    const narrowIndustries = (mask: Uint8Array) => {
      industries = industries ? industries.map((v, i) => v & (mask[i] ?? 0)) : mask;
    };
    const listing = wanted(filters.listing_category);
    if (listing)
      narrowIndustries(maskOf(INDUSTRIES, (industry) => listing.has(industry.listingCategory.toLowerCase())));
    const network = wanted(filters.network_category);
    if (network)
      narrowIndustries(maskOf(INDUSTRIES, (industry) => network.has(industry.networkCategory.toLowerCase())));
    if (filters.naics_category && filters.naics_category.values.length > 0) {
      const prefixes = filters.naics_category.values;
      narrowIndustries(
        maskOf(INDUSTRIES, (industry) => prefixes.some((prefix) => industry.naics.startsWith(prefix))),
      );
    }

    let regions: Uint8Array | null = null;
    const narrowRegions = (mask: Uint8Array) => {
      regions = regions ? regions.map((v, i) => v & (mask[i] ?? 0)) : mask;
    };
    const regionCodes = wanted(filters.company_region_country_code);
    if (regionCodes) narrowRegions(maskOf(REGION_LIST, (entry) => regionCodes.has(entry.iso)));

    // Locations: allowed (region, city) pairs, as region id * 256 + city position.
    let places: Set<number> | null = null;
    const locations = wanted(filters.city_region_country);
    if (locations) {
      places = new Set();
      for (const entry of REGION_LIST) {
        entry.region.cities.forEach((city, cityId) => {
          if (
            locations.has(cityRegionCountry(city.name, entry.region.code, entry.country.code).toLowerCase())
          ) {
            places?.add(entry.id * 256 + cityId);
          }
        });
      }
    }
    const sizes = wanted(filters.company_size);
    const sizeMask = sizes ? maskOf(COMPANY_SIZES, (range) => sizes.has(range.toLowerCase())) : null;
    const revenues = wanted(filters.company_revenue);
    const revenueMask = revenues
      ? maskOf(REVENUE_RANGES, (range) => revenues.has(range.toLowerCase()))
      : null;
    // has_website {value: false} asks for employers without one.
    const website = filters.has_website ? (filters.has_website.value ? 1 : 0) : null;

    if (
      industries === null &&
      regions === null &&
      places === null &&
      sizeMask === null &&
      revenueMask === null &&
      website === null
    )
      return null;
    const allowedIndustries = industries as Uint8Array | null;
    const allowedRegions = regions as Uint8Array | null;
    const allowedPlaces = places;
    const mask = new Uint8Array(this.size);
    for (let b = 0; b < this.size; b += 1) {
      if (allowedIndustries !== null && allowedIndustries[this.industry[b] as number] === 0) continue;
      const region = this.region[b] as number;
      if (allowedRegions !== null && allowedRegions[region] === 0) continue;
      if (allowedPlaces !== null && !allowedPlaces.has(region * 256 + (this.city[b] as number))) continue;
      if (sizeMask !== null && sizeMask[this.sizeRank[b] as number] === 0) continue;
      if (revenueMask !== null && revenueMask[this.revenueRank[b] as number] === 0) continue;
      if (website !== null && this.hasWebsite[b] !== website) continue;
      mask[b] = 1;
    }
    return mask;
  }
}
